package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// A burst reads its recipients from a report's rows, executed as the owner:
// each row gives an address and an element of the attribute the burst is
// split by; each distinct address gets the subscription restricted to its
// rows' elements, within the owner's own slice of the data. A row without an
// address or element, an address its kind refuses, one whose holder did not
// confirm the owner's messages (delivery.verifyRecipients) and the addresses
// past subscriptions.maxBurstRecipients are skipped and counted, never fatal.

// burstAddress is one distinct address of a burst and the elements its rows give.
type burstAddress struct {
	address  string
	row      int // its first row, from 1
	elements []string
}

// burstTargets lists the addresses a burst sends to, each as the owner (as)
// restricted to its elements.
func (e *Engine) burstTargets(ctx context.Context, sub store.Subscription, as Principal, aud *audience) ([]*target, error) {
	b := sub.Def.Burst
	ch, err := e.via(ctx, b.Via)
	if err != nil {
		return nil, err
	}
	may, err := e.domain.Verifier(ctx, sub.Owner)
	if err != nil {
		return nil, err
	}
	addresses, err := e.burstAddresses(ctx, as, b, aud)
	if err != nil {
		return nil, err
	}
	out := make([]*target, 0, len(addresses))
	for _, a := range addresses {
		config, err := e.domain.Readdress(b.Via, ch, a.address)
		if err != nil {
			aud.skip(notify.Skip{Row: a.row, Address: a.address, Reason: err.Error()})
			continue
		}
		if !may(b.Via.Kind, config) {
			aud.skip(notify.Skip{Row: a.row, Address: a.address,
				Reason: "its holder has not confirmed the owner's messages (delivery.verifyRecipients)"})
			continue
		}
		slices.Sort(a.elements)
		only := NewFilters("[" + b.By + "] IN ([" + strings.Join(slices.Compact(a.elements), "], [") + "])")
		out = append(out, &target{as: Principal{User: as.User, Project: as.Project, Filters: as.Filters.And(only)},
			dests: []dest{{channel: ch, kind: b.Via.Kind, config: config, address: a.address}}})
	}
	return out, nil
}

// burstAddresses reads a burst's report, executed as the owner, into its
// distinct addresses in the order of their first rows.
func (e *Engine) burstAddresses(ctx context.Context, as Principal, b *store.Burst, aud *audience) ([]*burstAddress, error) {
	rows, err := e.analytics.BurstRows(ctx, as, b.Report, b.Address, b.By)
	if err != nil {
		return nil, fmt.Errorf("the burst's report %s: %w", b.Report, err)
	}
	limit := e.domain.MaxBurstRecipients()
	byKey := map[string]*burstAddress{}
	var out []*burstAddress
	n := 0
	for row, err := range rows {
		if err != nil {
			return nil, fmt.Errorf("the burst's report %s: %w", b.Report, err)
		}
		n++
		address := strings.TrimSpace(row.Address)
		switch {
		case address == "":
			aud.skip(notify.Skip{Row: n, Reason: "the row has no address"})
			continue
		case row.Element == "":
			aud.skip(notify.Skip{Row: n, Address: address, Reason: "the row has no element to restrict the address to"})
			continue
		}
		key := address
		if b.Via.Kind == notify.ViaEmail {
			key = strings.ToLower(address) // one mailbox, however its address is written
		}
		a := byKey[key]
		if a == nil {
			if len(out) >= limit {
				aud.skip(notify.Skip{Row: n, Address: address,
					Reason: fmt.Sprintf("past subscriptions.maxBurstRecipients (%d addresses)", limit)})
				continue
			}
			a = &burstAddress{address: address, row: n}
			byKey[key] = a
			out = append(out, a)
		}
		a.elements = append(a.elements, row.Element)
	}
	aud.Rows = n
	return out, nil
}
