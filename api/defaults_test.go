package api

import (
	"testing"

	"github.com/heraldhq/herald/internal/httpserve"
	"github.com/heraldhq/herald/internal/logging"
)

// TestZeroOptionsTakeTheHTTPDefaults: the bounds the API enforces of the http
// section take that section's defaults, not others of the API's own.
func TestZeroOptionsTakeTheHTTPDefaults(t *testing.T) {
	t.Parallel()
	s, d := New(nil, Options{}), httpserve.DefaultConfig()
	if s.maxBody != d.MaxBodyBytes || s.maxLoad != d.MaxLoadBytes || s.longTimeout != d.LongTimeout {
		t.Errorf("maxBody %d, maxLoad %d, longTimeout %s; want %d, %d, %s",
			s.maxBody, s.maxLoad, s.longTimeout, d.MaxBodyBytes, d.MaxLoadBytes, d.LongTimeout)
	}
	if want := logging.DefaultConfig().AccessLog(); s.access != want {
		t.Errorf("access log %+v, want the log section's default", s.access)
	}
}
