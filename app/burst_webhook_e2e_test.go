package app_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/webhook"
)

// TestBurstByWebhookPostsEachURLItsStore: a burst through a webhook channel
// of the owner's posts, to the URL each row of the report gives, only that
// row's store's numbers, signed with the channel's secret; a row whose URL
// the webhook kind refuses is skipped and counted.
func TestBurstByWebhookPostsEachURLItsStore(t *testing.T) {
	gate.Parallel(t)
	var mu sync.Mutex
	bodies := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get(webhook.HeaderSignature) == "" {
			bodies[r.URL.Path] = "unsigned"
			return
		}
		bodies[r.URL.Path] = string(b)
	}))
	t.Cleanup(srv.Close)
	managers := []string{srv.URL + "/hook/1,s1", srv.URL + "/hook/2,s2", srv.URL + "/hook/3,s3", "ftp://files.example.com/x,s1"}
	w := newBurstWorld(t, 3, managers, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	r := w.admin.do("POST", w.b.AdminProfile+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"`+srv.URL+`/owner","secret":"whsec-owner-0123456789"}},"meta":{"title":"Hook"}}}`)
	wantStatus(t, r, 201)
	channel := dig(r.json(t), "channelConfiguration", "meta", "uri").(string)
	sub := w.subscribe(t, 201, map[string]any{"via": channel})
	run, _ := w.fire(t, sub, 0)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(bodies) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	for store := 1; store <= 3; store++ {
		body := bodies[fmt.Sprintf("/hook/%d", store)]
		if !strings.Contains(body, fmt.Sprintf("Sales: %d.00", store*100)) {
			t.Errorf("store %d's hook got %q", store, body)
		}
		for other := 1; other <= 3; other++ {
			if other != store && strings.Contains(body, fmt.Sprintf("Sales: %d.00", other*100)) {
				t.Errorf("store %d's hook got store %d's sales: %q", store, other, body)
			}
		}
	}
	if _, ok := bodies["/owner"]; ok || len(bodies) != 3 {
		t.Errorf("posts to %v, want the three stores' URLs only", len(bodies))
	}
	if run["skipped"] != 1.0 || !strings.Contains(fmt.Sprint(dig(run, "audience", "skips")), "ftp://files.example.com/x") {
		t.Errorf("the run skipped %v: %v", run["skipped"], dig(run, "audience", "skips"))
	}
}
