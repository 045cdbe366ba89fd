package maintenance

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"time"

	"github.com/heraldhq/herald/analytics"
)

// An archive is a tar file: manifest.json first, then snapshot.json, members.json when
// the export has the project's members, and data/<file>.parquet for each table of the
// warehouse when it has the data. Parquet files are compressed already; the archive is
// not compressed again.
const (
	formatVersion = "herald-archive/1"
	entryManifest = "manifest.json"
	entrySnapshot = "snapshot.json"
	entryMembers  = "members.json"
	dataPrefix    = "data/"
)

// manifest says what an archive holds.
type manifest struct {
	Format  string    `json:"format"`
	Kind    string    `json:"kind"` // store.ArtifactProject or store.ArtifactPartial
	Project string    `json:"project"`
	Created time.Time `json:"created"`
	Users   bool      `json:"users"`
	Data    bool      `json:"data"`
}

// member is a member of the exported project, named by login.
type member struct {
	Login  string   `json:"login"`
	Status string   `json:"status"`
	Roles  []string `json:"roles"`
	// UserFilters are the identifiers of the member's user filters: their
	// data permissions go with them.
	UserFilters []string `json:"userFilters,omitempty"`
}

// archive is what an archive holds besides its data files.
type archive struct {
	Manifest manifest
	Snapshot *analytics.Snapshot
	Members  []member
}

// writeArchive writes a to the file at dst (aside first, then renamed into place),
// streaming the Parquet files of a's tables from dataDir.
func writeArchive(dst string, a archive, dataDir string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	tw := tar.NewWriter(tmp)
	a.Manifest.Format = formatVersion
	if err := putJSON(tw, entryManifest, a.Manifest, a.Manifest.Created); err != nil {
		return err
	}
	if err := putJSON(tw, entrySnapshot, a.Snapshot, a.Manifest.Created); err != nil {
		return err
	}
	if a.Manifest.Users {
		if err := putJSON(tw, entryMembers, a.Members, a.Manifest.Created); err != nil {
			return err
		}
	}
	for _, t := range a.Snapshot.Tables {
		if err := putFile(tw, dataPrefix+t.File, filepath.Join(dataDir, t.File), a.Manifest.Created); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	return os.Rename(tmp.Name(), dst)
}

func putJSON(tw *tar.Writer, name string, v any, at time.Time) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write archive %s: %w", name, err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: at}); err != nil {
		return fmt.Errorf("write archive %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("write archive %s: %w", name, err)
	}
	return nil
}

func putFile(tw *tar.Writer, name, src string, at time.Time) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: info.Size(), ModTime: at}); err != nil {
		return fmt.Errorf("write archive %s: %w", name, err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("write archive %s: %w", name, err)
	}
	return nil
}

// Limits on what an archive may hold, so a damaged one cannot exhaust memory.
const maxJSONEntry = 256 << 20

var dataFileName = regexp.MustCompile(`^[0-9]{1,6}\.parquet$`)

// errDamaged is an archive that cannot be read.
var errDamaged = errors.New("the archive is damaged")

// readArchive reads the archive at src, extracting its data files into dataDir; with no
// dataDir, an archive with data files is damaged. Every table of its snapshot must have
// its file.
func readArchive(src, dataDir string) (archive, error) {
	f, err := os.Open(src)
	if err != nil {
		return archive{}, fmt.Errorf("read archive: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return archive{}, fmt.Errorf("read archive: %w", err)
	}
	return readTar(f, info.Size(), dataDir)
}

// readTar reads an archive of size bytes from r, as readArchive does.
func readTar(r io.Reader, size int64, dataDir string) (archive, error) {
	var a archive
	tr := tar.NewReader(r)
	files := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return a, fmt.Errorf("%w: %v", errDamaged, err)
		}
		// Only plain files, none larger than the archive: a sparse entry could claim any size.
		if h.Typeflag != tar.TypeReg || h.Size > size || len(h.PAXRecords) > 0 {
			return a, fmt.Errorf("%w: entry %q is not a plain file", errDamaged, h.Name)
		}
		switch name := path.Clean(h.Name); {
		case name == entryManifest:
			err = getJSON(tr, h, &a.Manifest)
		case name == entrySnapshot:
			err = getJSON(tr, h, &a.Snapshot)
		case name == entryMembers:
			err = getJSON(tr, h, &a.Members)
		case path.Dir(name)+"/" == dataPrefix && dataFileName.MatchString(path.Base(name)) && dataDir != "":
			files[path.Base(name)] = true
			err = extract(tr, filepath.Join(dataDir, path.Base(name)))
		default:
			err = fmt.Errorf("%w: unexpected entry %q", errDamaged, h.Name)
		}
		if err != nil {
			return a, err
		}
	}
	if a.Manifest.Format != formatVersion || a.Snapshot == nil {
		return a, fmt.Errorf("%w: no %s or %s of format %s", errDamaged, entryManifest, entrySnapshot, formatVersion)
	}
	for _, t := range a.Snapshot.Tables {
		if !files[t.File] {
			return a, fmt.Errorf("%w: the data of %s.%s is missing", errDamaged, t.Schema, t.Name)
		}
	}
	return a, nil
}

func getJSON(r io.Reader, h *tar.Header, v any) error {
	if h.Size > maxJSONEntry {
		return fmt.Errorf("%w: %s is too large", errDamaged, h.Name)
	}
	if err := json.NewDecoder(io.LimitReader(r, h.Size)).Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", errDamaged, h.Name, err)
	}
	return nil
}

func extract(r io.Reader, dst string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("read archive: %w", err)
	}
	return f.Close()
}
