package analytics

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/analytics/warehouse"
)

// FuzzLoad loads arbitrary bodies into a dataset with a key, an e-mail label and a name:
// a body is loaded, or refused with a *warehouse.RowError (a row, or the file as a
// whole, and why) or an *InputError; never another error, never a panic.
func FuzzLoad(f *testing.F) {
	fx := newFixture(f)
	fx.manage(f, devsScript(f))
	for _, seed := range []string{
		devsCSV,
		"id,nm_email,nm_name\r\nd1,a@x.io,Al\r\n",
		"\xef\xbb\xbfID , NM_EMAIL,nm_name\nd1,\"a,b@x.io\",\"Al \"\"the\"\" dev\"\n",
		"id,nm_email,nm_name\nd1,a@x.io\n",
		"id,nm_email,nm_name\nd1,a@x.io,Al,extra\n",
		"id,nm_email,nm_name\nd1,a@x.io,Al\nd1,b@x.io,Bea\n",
		"id,nm_email,nm_name\n\"d1,a@x.io,Al\n",
		"id,id,nm_name\nd1,d1,Al\n",
		"nope\n",
		"",
		"id,nm_email,nm_name\nd1,\xff\xfe,Al\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := fx.s.Load(context.Background(), fx.pid, "dataset.devs", LoadFull, bytes.NewReader(data))
		if err == nil {
			return
		}
		var re *warehouse.RowError
		var in *InputError
		if !errors.As(err, &re) && !errors.As(err, &in) {
			t.Fatalf("body %q: %T %v, want a *warehouse.RowError", data, err, err)
		}
		if re != nil && (re.Row < 0 || re.Msg == "") {
			t.Fatalf("body %q: row %d", data, re.Row)
		}
	})
}
