package httpguard

import (
	"net/http/httptest"
	"testing"
)

func TestCrossSiteIsOnlyAStateChangeFromAnotherSite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, site       string
		cross, otherOrigin bool
	}{
		{"POST", "cross-site", true, true},
		{"DELETE", "cross-site", true, true},
		{"PUT", "same-site", false, true},
		{"POST", "same-origin", false, false},
		{"POST", "none", false, false},
		{"POST", "", false, false},
		{"GET", "cross-site", false, false},
		{"HEAD", "same-site", false, false},
	} {
		r := httptest.NewRequest(tc.method, "/", nil)
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if CrossSite(r) != tc.cross || OtherOrigin(r) != tc.otherOrigin {
			t.Errorf("%s with Sec-Fetch-Site %q: cross-site %v, other origin %v; want %v, %v",
				tc.method, tc.site, CrossSite(r), OtherOrigin(r), tc.cross, tc.otherOrigin)
		}
	}
}
