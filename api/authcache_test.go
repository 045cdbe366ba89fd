package api

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// TestAuthCacheDropsAFillThatRacedAPurge plays the race of a token's first use with a
// logout step by step: the request reads the session, the logout revokes and purges, the
// request fills the cache. The fill must not be kept.
func TestAuthCacheDropsAFillThatRacedAPurge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := newAuthCache(10)
	p := store.Principal{UserID: "u", SessionID: "s", Expires: now.Add(time.Hour)}
	hash := []byte("tt")

	gen := c.generation()                                               // the request starts its read...
	c.purge(func(q store.Principal) bool { return q.SessionID == "s" }) // ...the logout purges...
	c.put(hash, p, gen)                                                 // ...and the request fills
	if _, ok := c.get(hash, now); ok {
		t.Fatal("a principal read before the logout's purge is in the cache after it")
	}

	c.put(hash, p, c.generation()) // a fill after the purge is a fill of a live session
	if _, ok := c.get(hash, now); !ok {
		t.Fatal("a fill with no purge since it began was dropped")
	}
}
