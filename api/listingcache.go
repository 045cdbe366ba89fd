package api

import "sync"

// listingCache keeps the encoded answers of the project listings, by what
// shapes them (whose projects, who asks, which page), with the store's
// ProjectsVersion they were read at. An answer is served again only while
// that version stays, that is until a project or a membership is written:
// listing the projects is what every client does after its login, and reading
// and encoding them took most of the request's time.
type listingCache struct {
	mu       sync.RWMutex
	entries  map[listingKey]listing
	bytes    int // of the answers kept
	maxBytes int
}

type listingKey struct {
	path          string // the paging links name it
	user, caller  string
	offset, limit int
	paged         bool
}

type listing struct {
	version uint64
	body    []byte
}

func newListingCache(maxBytes int) *listingCache {
	return &listingCache{entries: make(map[listingKey]listing), maxBytes: maxBytes}
}

// get returns the answer kept for k if it was read at version.
func (c *listingCache) get(k listingKey, version uint64) ([]byte, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || e.version != version {
		return nil, false
	}
	return e.body, true
}

// put keeps body, read at version (taken before the read began).
func (c *listingCache) put(k listingKey, version uint64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(body) > c.maxBytes/16 {
		return // a listing that large is rare; it is read each time
	}
	if old, ok := c.entries[k]; ok {
		c.bytes -= len(old.body)
	}
	if c.bytes+len(body) > c.maxBytes {
		clear(c.entries) // a cold cache only costs reads
		c.bytes = 0
	}
	c.entries[k] = listing{version: version, body: body}
	c.bytes += len(body)
}
