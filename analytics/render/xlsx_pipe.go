package render

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/xuri/excelize/v2"
)

// A workbook is written while its rows are formatted. Once the title and
// header rows are in excelize's StreamWriter, the workbook is written on a
// goroutine of its own; when it comes to the end of the sheet's data, it
// takes the data rows as they are formatted, so that one core formats rows
// while another deflates those before them.

// sheetPart is the part of the workbook's one sheet.
const sheetPart = "xl/worksheets/sheet1.xml"

// rowChunk is how many bytes of formatted rows go to the writer at a time.
const rowChunk = 256 << 10

// Why a workbook's rows ended early.
var (
	// errWriterGone: the workbook's writer returned before it took every row.
	errWriterGone = errors.New("the workbook's writer stopped")
	// errAbandoned: the rows' producer panicked.
	errAbandoned = errors.New("the workbook's rows were abandoned")
)

// rowPipe carries formatted rows from the goroutine that formats them to the
// one that writes the workbook, a few chunks at a time.
type rowPipe struct {
	buf    []byte        // rows formatted since the last chunk went
	chunks chan []byte   // the rows, in order
	spare  chan []byte   // chunks written, for reuse
	done   chan struct{} // closed when the writer returns
	err    error         // why the rows ended early; set before chunks closes
	closed bool          // the rows ended
}

func newRowPipe() *rowPipe {
	return &rowPipe{
		buf:    make([]byte, 0, rowChunk+4<<10),
		chunks: make(chan []byte, 4),
		spare:  make(chan []byte, 5),
		done:   make(chan struct{}),
	}
}

// full reports whether the formatted rows fill a chunk.
func (p *rowPipe) full() bool { return len(p.buf) >= rowChunk }

// send hands the rows formatted so far to the writer.
func (p *rowPipe) send() error {
	select {
	case p.chunks <- p.buf:
	case <-p.done:
		return errWriterGone
	}
	select {
	case b := <-p.spare:
		p.buf = b[:0]
	default:
		p.buf = make([]byte, 0, cap(p.buf))
	}
	return nil
}

// close ends the rows, with err when they end early.
func (p *rowPipe) close(err error) {
	if err == nil && len(p.buf) > 0 {
		err = p.send()
	}
	p.err, p.closed = err, true
	close(p.chunks)
}

// writeTo writes every row to w as it comes, or returns why the rows ended
// early.
func (p *rowPipe) writeTo(w io.Writer) error {
	for b := range p.chunks {
		if _, err := w.Write(b); err != nil {
			return err
		}
		select {
		case p.spare <- b:
		default:
		}
	}
	return p.err
}

// writeBehind writes f to w on a goroutine of its own, which takes the data
// rows from rows as they come; wait returns its error once it is done.
func writeBehind(f *excelize.File, w io.Writer, rows *rowPipe) (wait func() error) {
	written := make(chan error, 1)
	go func() {
		defer close(rows.done)
		written <- f.Write(w)
	}()
	return func() error { return <-written }
}

// splicingZip is the workbook's archive, the rows spliced into the sheet's
// part before the end of its data: excelize's StreamWriter wrote the part
// with the rows above the data only.
type splicingZip struct {
	*zip.Writer
	rows  *rowPipe
	held  *bytes.Buffer // the sheet's part as excelize writes it, until its end
	entry io.Writer     // the sheet's part in the archive, once excelize started it
}

func newSplicingZip(w io.Writer, rows *rowPipe) *splicingZip {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, newDeflater)
	return &splicingZip{Writer: zw, rows: rows}
}

// Create starts a part, which ends the one before.
func (z *splicingZip) Create(name string) (io.Writer, error) {
	if err := z.splice(); err != nil {
		return nil, err
	}
	w, err := z.Writer.Create(name)
	if err != nil || name != sheetPart {
		return w, err
	}
	z.entry, z.held = w, new(bytes.Buffer)
	return z.held, nil
}

// AddFS adds the files of fsys as parts.
func (z *splicingZip) AddFS(fsys fs.FS) error {
	if err := z.splice(); err != nil {
		return err
	}
	return z.Writer.AddFS(fsys)
}

// Close ends the archive.
func (z *splicingZip) Close() error {
	if err := z.splice(); err != nil {
		return err
	}
	if z.entry == nil {
		return fmt.Errorf("the workbook has no part %s for its rows", sheetPart)
	}
	return z.Writer.Close()
}

// splice writes the sheet's part, once excelize has, with the rows in it.
func (z *splicingZip) splice() error {
	if z.held == nil {
		return nil
	}
	part := z.held.Bytes()
	z.held = nil
	end := bytes.LastIndex(part, []byte("</sheetData>"))
	if end < 0 {
		return fmt.Errorf("the workbook's part %s has no sheet data", sheetPart)
	}
	if _, err := z.entry.Write(part[:end]); err != nil {
		return err
	}
	if err := z.rows.writeTo(z.entry); err != nil {
		return err
	}
	_, err := z.entry.Write(part[end:])
	return err
}
