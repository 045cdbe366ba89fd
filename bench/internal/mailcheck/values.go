package mailcheck

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// Values are the figures the burst's mails say, by delivery: each
// subscription benchNNNNNN mails "Revenue <value>", the value of metric
// NNNNNN mod the fan-in benchmark's -metrics, which is the demo's revenue
// plus that number. The sink reads them as the mails arrive, without
// decoding the message (the text part is plain ASCII), by the delivery its
// Message-ID names; the deliveries table names each delivery's subscription.
type Values struct {
	mu  sync.Mutex
	got map[string]string // delivery id → value
	bad []string          // mails without a value or a Message-ID, or that came twice
}

// NewValues is ready for the mails of n subscriptions.
func NewValues(n int) *Values { return &Values{got: make(map[string]string, n)} }

// See reads the delivery and value of a mail.
func (v *Values) See(h textproto.MIMEHeader, body []byte) {
	id, _, _ := strings.Cut(strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>"), "@")
	val, ok := parseValue(body)
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, seen := v.got[id]; !ok || id == "" || seen {
		v.bad = append(v.bad, id)
		return
	}
	v.got[id] = val
}

var valueMark = []byte("Revenue ")

// parseValue finds "Revenue <value>" in body.
func parseValue(body []byte) (string, bool) {
	k := bytes.Index(body, valueMark)
	if k < 0 {
		return "", false
	}
	rest := body[k+len(valueMark):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == ',' || r == '.') })
	if end < 0 {
		end = len(rest)
	}
	return string(rest[:end]), end > 0
}

// Check verifies that every one of subs subscriptions over metrics metrics
// mailed once with its own metric's value: the values less each
// subscription's offset (its metric's number) are one and the same revenue.
// subOf names each delivery's subscription. It returns a checksum of every
// subscription's value, equal from run to run of the same data.
func (v *Values) Check(subs, metrics int, subOf map[string]string) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.bad) > 0 {
		return 0, fmt.Errorf("%d mails without a value or Message-ID, or that came twice (%q…)", len(v.bad), v.bad[0])
	}
	bySub := make([]string, subs)
	for id, val := range v.got {
		s, ok := subOf[id]
		n, err := strconv.Atoi(strings.TrimPrefix(s, "bench"))
		if !ok || !strings.HasPrefix(s, "bench") || err != nil || n < 0 || n >= subs {
			return 0, fmt.Errorf("delivery %s: subscription %q is not of the burst", id, s)
		}
		bySub[n] = val
	}
	h := fnv.New64a()
	base := math.NaN()
	for i, s := range bySub {
		x, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if s == "" || err != nil {
			return 0, fmt.Errorf("subscription %d: value %q", i, s)
		}
		b := x - float64(i%metrics)
		if math.IsNaN(base) {
			base = b
		}
		if math.Abs(b-base) > 0.005 {
			return 0, fmt.Errorf("subscription %d mailed %s, want %.2f (its metric, %d, over the revenue %.2f)", i, s, base+float64(i%metrics), i%metrics, base)
		}
		fmt.Fprintf(h, "%d=%s;", i, s)
	}
	return h.Sum64(), nil
}
