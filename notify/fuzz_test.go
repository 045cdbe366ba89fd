package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/wire"
)

// FuzzChannelBody feeds arbitrary channel bodies to CreateChannel: each is
// stored, or refused as invalid with a field path; never a panic, never
// another error.
func FuzzChannelBody(f *testing.F) {
	for _, s := range []string{
		`{"configuration":{"emailConfiguration":{"to":"a@b.c"}},"meta":{"title":"t"}}`,
		`{"configuration":{"smsConfiguration":{"username":"AC1","password":"x","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"S"}}`,
		`{"configuration":{"smsConfiguration":{"username":"AC1","password":5}},"meta":{"title":"S"}}`,
		`{"configuration":{"emailConfiguration":null},"meta":{"title":"t"}}`,
		`{"configuration":{"emailConfiguration":[1]},"meta":{"title":"t"}}`,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		var body wire.Channel
		if json.Unmarshal(in, &body) != nil {
			return
		}
		_, err := fx.svc.CreateChannel(context.Background(), "u1", channelBody(t, string(in)))
		var de *notify.Error
		if err != nil && (!errors.As(err, &de) || (de.Code != notify.Invalid && de.Code != notify.Conflict) ||
			(de.Code == notify.Invalid && de.Field == "")) {
			t.Fatalf("%s: %v", in, err)
		}
	})
}
