package worker

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// maxServerLine bounds one line of the embedded server's log.
const maxServerLine = 1024

// serverLog is the embedded NATS server's log written to Herald's: its
// warnings and errors at Warn and Error, its notices at Debug (a start
// writes a score of them), its debug and trace lines nowhere. A critical
// write error of its storage, which the server keeps to itself (the stream
// refuses every write after it until it is loaded again), is told to
// failed as well.
type serverLog struct {
	log    *slog.Logger
	failed func(msg string)
}

var _ server.Logger = serverLog{}

func (l serverLog) Noticef(format string, v ...any) { l.line(slog.LevelDebug, format, v) }
func (l serverLog) Warnf(format string, v ...any)   { l.line(slog.LevelWarn, format, v) }
func (l serverLog) Errorf(format string, v ...any)  { l.line(slog.LevelError, format, v) }
func (l serverLog) Fatalf(format string, v ...any)  { l.line(slog.LevelError, format, v) }
func (l serverLog) Debugf(string, ...any)           {}
func (l serverLog) Tracef(string, ...any)           {}

func (l serverLog) line(level slog.Level, format string, v []any) {
	msg := fmt.Sprintf(format, v...)
	if len(msg) > maxServerLine {
		msg = msg[:maxServerLine] + "…"
	}
	l.log.Log(context.Background(), level, msg)
	if level == slog.LevelError && l.failed != nil && strings.Contains(strings.ToLower(msg), "critical write error") {
		l.failed(msg)
	}
}
