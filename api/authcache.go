package api

import (
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
)

// authCache remembers which principal a temporary token speaks for, so an
// authenticated request costs no database read. An entry lives until its
// token expires; logging out, revoking and deleting users purge what they
// end, so the cache never lets an ended login through.
type authCache struct {
	mu      sync.RWMutex
	entries map[string]store.Principal // by token hash
	max     int
}

func newAuthCache(max int) *authCache {
	return &authCache{entries: make(map[string]store.Principal), max: max}
}

func (c *authCache) get(hash []byte, now time.Time) (store.Principal, bool) {
	c.mu.RLock()
	p, ok := c.entries[string(hash)]
	c.mu.RUnlock()
	if !ok || !now.Before(p.Expires) {
		return store.Principal{}, false
	}
	return p, true
}

func (c *authCache) put(hash []byte, p store.Principal) {
	c.mu.Lock()
	if len(c.entries) >= c.max {
		clear(c.entries) // a cold cache only costs database reads
	}
	c.entries[string(hash)] = p
	c.mu.Unlock()
}

// purge drops every entry whose principal matches.
func (c *authCache) purge(match func(store.Principal) bool) {
	c.mu.Lock()
	for k, p := range c.entries {
		if match(p) {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}
