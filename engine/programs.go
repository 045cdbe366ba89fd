package engine

import (
	"fmt"
	"slices"
	"sync"

	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// programs are a subscription's condition and templates, compiled.
type programs struct {
	cond    *jexl.Program
	message *jexl.Template
	// html is the message as an HTML template; nil when the subscription has none.
	html    *jexl.Template
	subject *jexl.Template // nil when the subscription has no subject
	// resolved is the all-clear message; nil when the subscription has none.
	resolved *jexl.Template
	metrics  []string // every metric they run, each once
	// previous are the metrics they read with f:previous, each once; they
	// are among metrics, computed at every run for the next to read.
	previous []string
}

// programCache keeps compiled programs by their source text, so subscriptions
// with the same texts (and every run of one subscription) compile once.
type programCache struct {
	mu sync.Mutex
	m  map[[5]string]*programs
}

const maxCachedPrograms = 10_000

func (c *programCache) get(def store.SubscriptionDef) (*programs, error) {
	key := [5]string{def.Condition, def.Message, def.Subject, def.Resolved, def.MessageHTML}
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
		c.m = make(map[[5]string]*programs)
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
	if def.MessageHTML != "" {
		if p.html, err = jexl.ParseTemplate(def.MessageHTML); err != nil {
			return nil, fmt.Errorf("HTML message: %w", err)
		}
	}
	if def.Subject != "" {
		if p.subject, err = jexl.ParseTemplate(def.Subject); err != nil {
			return nil, fmt.Errorf("subject: %w", err)
		}
	}
	if def.Resolved != "" {
		if p.resolved, err = jexl.ParseTemplate(def.Resolved); err != nil {
			return nil, fmt.Errorf("resolved message: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, list := range [][]string{p.cond.Metrics(), p.message.Metrics(), p.subjectMetrics(), p.resolvedMetrics(), p.htmlMetrics()} {
		for _, m := range list {
			if !seen[m] {
				seen[m] = true
				p.metrics = append(p.metrics, m)
			}
		}
	}
	p.previous = p.previousMetrics()
	for _, m := range p.previous {
		if !seen[m] {
			seen[m] = true
			p.metrics = append(p.metrics, m)
		}
	}
	return &p, nil
}

func (p *programs) htmlMetrics() []string {
	if p.html == nil {
		return nil
	}
	return p.html.Metrics()
}

func (p *programs) resolvedMetrics() []string {
	if p.resolved == nil {
		return nil
	}
	return p.resolved.Metrics()
}

func (p *programs) subjectMetrics() []string {
	if p.subject == nil {
		return nil
	}
	return p.subject.Metrics()
}

// previousMetrics lists the metrics the programs read with f:previous, each once.
func (p *programs) previousMetrics() []string {
	var out []string
	lists := [][]string{p.cond.Previous(), p.message.Previous()}
	for _, t := range []*jexl.Template{p.html, p.subject, p.resolved} {
		if t != nil {
			lists = append(lists, t.Previous())
		}
	}
	for _, list := range lists {
		for _, m := range list {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
