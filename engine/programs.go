package engine

import (
	"fmt"
	"sync"

	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// programs are a subscription's condition and templates, compiled.
type programs struct {
	cond    *jexl.Program
	message *jexl.Template
	subject *jexl.Template // nil when the subscription has no subject
	metrics []string       // every metric they run, each once
}

// programCache keeps compiled programs by their source text, so subscriptions
// with the same texts (and every run of one subscription) compile once.
type programCache struct {
	mu sync.Mutex
	m  map[[3]string]*programs
}

const maxCachedPrograms = 10_000

func (c *programCache) get(def store.SubscriptionDef) (*programs, error) {
	key := [3]string{def.Condition, def.Message, def.Subject}
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := compile(def)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedPrograms {
		c.m = make(map[[3]string]*programs)
	}
	c.m[key] = p
	c.mu.Unlock()
	return p, nil
}

func compile(def store.SubscriptionDef) (*programs, error) {
	var p programs
	var err error
	if p.cond, err = jexl.CompileCondition(def.Condition); err != nil {
		return nil, fmt.Errorf("condition: %w", err)
	}
	if p.message, err = jexl.ParseTemplate(def.Message); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	if def.Subject != "" {
		if p.subject, err = jexl.ParseTemplate(def.Subject); err != nil {
			return nil, fmt.Errorf("subject: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, list := range [][]string{p.cond.Metrics(), p.message.Metrics(), p.subjectMetrics()} {
		for _, m := range list {
			if !seen[m] {
				seen[m] = true
				p.metrics = append(p.metrics, m)
			}
		}
	}
	return &p, nil
}

func (p *programs) subjectMetrics() []string {
	if p.subject == nil {
		return nil
	}
	return p.subject.Metrics()
}
