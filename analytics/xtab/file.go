package xtab

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// A result file holds a pivoted result: a magic, a JSON header with the column headers,
// then one record per row: the row's header elements (id as a varint, label as a
// length-prefixed string) and one cell per column (a byte 0 for empty, or 1 and the
// value as 8 bytes, little endian).
const fileMagic = "HXT1"

// maxLabel bounds a label read back from a file.
const maxLabel = 1 << 20

// elem is a header element: an attribute element, or a metric (its index and title).
type elem struct {
	ID    int64  `json:"i"`
	Label string `json:"l"`
}

// fileHeader is the header of a result file.
type fileHeader struct {
	Rows    int      `json:"rows"`
	Columns [][]elem `json:"columns"`
}

// fileWriter writes a result file aside and renames it into place on close.
type fileWriter struct {
	f    *os.File
	bw   *bufio.Writer
	path string
	buf  [binary.MaxVarintLen64]byte
}

func createFile(path string, h fileHeader) (*fileWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	w := &fileWriter{f: f, bw: bufio.NewWriterSize(f, 64<<10), path: path}
	head, err := json.Marshal(h)
	if err != nil {
		w.abort()
		return nil, err
	}
	w.bw.WriteString(fileMagic)
	w.uvarint(uint64(len(head)))
	w.bw.Write(head)
	return w, nil
}

func (w *fileWriter) uvarint(v uint64) {
	n := binary.PutUvarint(w.buf[:], v)
	w.bw.Write(w.buf[:n])
}

// row writes a row: its header elements and its cells, valid telling which hold a value.
func (w *fileWriter) row(headers []elem, values []float64, valid []bool) {
	for _, h := range headers {
		n := binary.PutVarint(w.buf[:], h.ID)
		w.bw.Write(w.buf[:n])
		w.uvarint(uint64(len(h.Label)))
		w.bw.WriteString(h.Label)
	}
	for i, v := range values {
		if !valid[i] {
			w.bw.WriteByte(0)
			continue
		}
		w.bw.WriteByte(1)
		binary.LittleEndian.PutUint64(w.buf[:8], math.Float64bits(v))
		w.bw.Write(w.buf[:8])
	}
}

// close finishes the file; write errors surface here.
func (w *fileWriter) close() error {
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

func (w *fileWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// fileReader reads a result file row by row.
type fileReader struct {
	f         *os.File
	br        *bufio.Reader
	header    fileHeader
	rowLevels int
	read      int
	buf       []byte   // a label as read
	labels    []string // the last label read at each row level
}

var errCorrupt = errors.New("result file is corrupt")

func openFile(path string, rowLevels int) (*fileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newFileReader(f, rowLevels)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

func newFileReader(rd io.Reader, rowLevels int) (*fileReader, error) {
	r := &fileReader{br: bufio.NewReaderSize(rd, 64<<10), rowLevels: rowLevels}
	magic := make([]byte, len(fileMagic))
	if _, err := io.ReadFull(r.br, magic); err != nil || string(magic) != fileMagic {
		return nil, errCorrupt
	}
	n, err := binary.ReadUvarint(r.br)
	if err != nil || n > 1<<30 {
		return nil, errCorrupt
	}
	head, err := io.ReadAll(io.LimitReader(r.br, int64(n)))
	if err != nil || uint64(len(head)) != n {
		return nil, errCorrupt
	}
	if err := json.Unmarshal(head, &r.header); err != nil || r.header.Rows < 0 {
		return nil, errCorrupt
	}
	return r, nil
}

func (r *fileReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// next reads the next row into headers and values (cells without a value are nil); it
// returns io.EOF after the last row.
func (r *fileReader) next(headers []elem, values []*float64) error {
	if r.read >= r.header.Rows {
		return io.EOF
	}
	r.read++
	for i := range headers {
		id, err := binary.ReadVarint(r.br)
		if err != nil {
			return errCorrupt
		}
		n, err := binary.ReadUvarint(r.br)
		if err != nil || n > maxLabel {
			return errCorrupt
		}
		label, err := r.label(i, int(n))
		if err != nil {
			return errCorrupt
		}
		headers[i] = elem{ID: id, Label: label}
	}
	var buf [8]byte
	for i := range values {
		flag, err := r.br.ReadByte()
		if err != nil || flag > 1 {
			return errCorrupt
		}
		values[i] = nil
		if flag == 1 {
			if _, err := io.ReadFull(r.br, buf[:]); err != nil {
				return errCorrupt
			}
			v := math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
			values[i] = &v
		}
	}
	return nil
}

// label reads a label of n bytes at row level i. The rows of a result come in order,
// so a label is often the one of the row before, whose string it then shares.
func (r *fileReader) label(i, n int) (string, error) {
	if r.labels == nil {
		r.labels = make([]string, r.rowLevels)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.br, b); err != nil {
		return "", err
	}
	if i >= len(r.labels) {
		return string(b), nil
	}
	if r.labels[i] != string(b) {
		r.labels[i] = string(b)
	}
	return r.labels[i], nil
}

// skip reads past n rows.
func (r *fileReader) skip(n int) error {
	for range n {
		if r.read >= r.header.Rows {
			return io.EOF
		}
		r.read++
		for range r.rowLevels {
			if _, err := binary.ReadVarint(r.br); err != nil {
				return errCorrupt
			}
			l, err := binary.ReadUvarint(r.br)
			if err != nil || l > maxLabel {
				return errCorrupt
			}
			if _, err := r.br.Discard(int(l)); err != nil {
				return errCorrupt
			}
		}
		for range r.header.Columns {
			flag, err := r.br.ReadByte()
			if err != nil || flag > 1 {
				return errCorrupt
			}
			if flag == 1 {
				if _, err := r.br.Discard(8); err != nil {
					return errCorrupt
				}
			}
		}
	}
	return nil
}

// removeFile removes a result file; one already gone is not an error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
