package app_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiskFullAtTheInstant runs the binary on a data folder whose disk fills up just
// before 1,000 subscriptions are due, and stays full for the outage: /readyz says so
// within 10 s, naming the data folder; nothing is lost or charged an attempt; once space
// returns, every mail arrives once within 30 s and every run and delivery is final.
func TestDiskFullAtTheInstant(t *testing.T) {
	gate.Long(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=160m"); err != nil {
		t.Skipf("cannot mount a tmpfs for a disk that fills (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	d := newDrillIn(t, dir, 1, nil)
	outage := max(drillOutage(t)/2, 5*time.Second)
	time.Sleep(time.Until(d.at.Add(-time.Second)))
	free := fillDisk(t, dir)
	full := time.Now()
	var why string
	for {
		status, body := readyz(t, d.p.OpsURL)
		why, _ = body["checks"].(map[string]any)["data"].(string)
		if status == http.StatusServiceUnavailable && strings.Contains(why, "no space left") {
			break
		}
		if time.Since(full) > 10*time.Second {
			t.Fatalf("10 s into a full disk /readyz says %d %v", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	seen := time.Since(full)
	time.Sleep(time.Until(full.Add(outage))) // the outage, in the process's real time
	free()
	back := time.Now()
	done := d.waitMails(d.mails(), 30*time.Second)
	d.waitFinal(30*time.Second - time.Since(back))
	distinct, dups := d.counts()
	worst, failed := d.attempts()
	t.Logf("disk full for %s from a second before the instant: /readyz named it after %s; all %d mails %s after "+
		"space returned, %d duplicates, at most %d attempts a delivery, %d failed", outage, seen.Round(time.Millisecond),
		distinct, done.Sub(back).Round(time.Millisecond), dups, worst, failed)
	if dups != 0 || failed != 0 || worst > 1 {
		t.Errorf("%d duplicates, %d failed, at most %d attempts a delivery; want none, none, one each", dups, failed, worst)
	}
}

// fillDisk writes a file into dir until its disk is full, to the last byte, and returns
// the function that removes it.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1 << 20, 64 << 10, 4 << 10, 512, 1} {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(fmt.Errorf("free the disk: %w", err))
		}
	}
}
