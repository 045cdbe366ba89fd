package maintenance

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics"
)

func sampleArchive(t testing.TB) (archive, string) {
	t.Helper()
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "000.parquet"), []byte("PAR1 rows PAR1"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := archive{
		Manifest: manifest{Format: formatVersion, Kind: "project", Project: "p1", Created: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC),
			Users: true, Data: true},
		Snapshot: &analytics.Snapshot{Project: "p1", Model: []byte(`{"datasets":{}}`),
			Objects: []analytics.SnapshotObject{{ID: 7, Category: "metric", Identifier: "m", Title: "M", Content: []byte(`{"expression":"SELECT 1"}`)}},
			Tables:  []analytics.SnapshotTable{{Schema: "main", Name: "f_x", Rows: 3, File: "000.parquet"}}},
		Members: []member{{Login: "a@x.io", Status: "ENABLED", Roles: []string{"adminRole"}}},
	}
	return a, dataDir
}

func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	a, dataDir := sampleArchive(t)
	path := filepath.Join(t.TempDir(), "a.tar")
	if err := writeArchive(path, a, dataDir); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	got, err := readArchive(path, out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Manifest, a.Manifest) || !reflect.DeepEqual(got.Members, a.Members) ||
		got.Snapshot.Objects[0].Identifier != "m" || string(got.Snapshot.Model) != `{"datasets":{}}` {
		t.Fatalf("read %+v", got)
	}
	data, _ := os.ReadFile(filepath.Join(out, "000.parquet"))
	if string(data) != "PAR1 rows PAR1" {
		t.Fatalf("data file %q", data)
	}
	if _, err := readArchive(path, ""); !errors.Is(err, errDamaged) {
		t.Fatalf("data without a folder for it: %v", err)
	}
}

// tarOf builds a tar of the entries, name then content.
func tarOf(t testing.TB, entries ...string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: entries[i], Mode: 0o600, Size: int64(len(entries[i+1]))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(entries[i+1]))
	}
	tw.Close()
	return buf.Bytes()
}

func TestDamagedArchives(t *testing.T) {
	t.Parallel()
	const man = `{"format":"herald-archive/1","kind":"project","project":"p"}`
	tests := []struct {
		name string
		data []byte
	}{
		{"not a tar", []byte("hello")},
		{"empty", tarOf(t)},
		{"no snapshot", tarOf(t, "manifest.json", man)},
		{"other format", tarOf(t, "manifest.json", `{"format":"x/9"}`, "snapshot.json", `{}`)},
		{"bad JSON", tarOf(t, "manifest.json", man, "snapshot.json", `{`)},
		{"a path out of the folder", tarOf(t, "manifest.json", man, "snapshot.json", `{}`, "data/../../evil.parquet", "x")},
		{"an unexpected entry", tarOf(t, "manifest.json", man, "snapshot.json", `{}`, "run.sh", "x")},
		{"a table without its data", tarOf(t, "manifest.json", man, "snapshot.json",
			`{"tables":[{"schema":"main","name":"f","rows":1,"file":"000.parquet"}]}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.tar")
			os.WriteFile(path, tc.data, 0o600)
			if _, err := readArchive(path, t.TempDir()); !errors.Is(err, errDamaged) {
				t.Fatalf("err %v, want a damaged archive", err)
			}
		})
	}
}

// FuzzReadArchive feeds archives to the reader. Each input is a whole archive
// extracted to disk, so minimizing one takes long: run it with a bound such as
// -fuzzminimizetime 100x (as .ci/run does), or the time goes to minimizing.
func FuzzReadArchive(f *testing.F) {
	a, dataDir := sampleArchive(f)
	path := filepath.Join(f.TempDir(), "a.tar")
	if err := writeArchive(path, a, dataDir); err != nil {
		f.Fatal(err)
	}
	valid, _ := os.ReadFile(path)
	f.Add(valid)
	f.Add(tarOf(f, "data/1.parquet", "x", "manifest.json", `{"format":"herald-archive/1"}`))
	parent := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := os.MkdirTemp(parent, "out")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(out)
		got, err := readTar(bytes.NewReader(data), int64(len(data)), out)
		entries, _ := os.ReadDir(parent)
		if len(entries) != 1 {
			t.Fatalf("files written beside the data folder: %v", entries)
		}
		files, _ := os.ReadDir(out)
		for _, e := range files {
			if e.IsDir() || !dataFileName.MatchString(e.Name()) {
				t.Fatalf("unexpected file %s", e.Name())
			}
		}
		if err == nil && (got.Snapshot == nil || got.Manifest.Format != formatVersion) {
			t.Fatalf("accepted %+v", got)
		}
	})
}
