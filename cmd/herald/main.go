// Command herald runs the Herald service: the analytics API and the worker
// that delivers scheduled reports and metric alerts.
//
//	herald serve [--demo] [--roles api,engine,worker] [--config FILE] [--data DIR] [--listen ADDR] [--metrics ADDR|off]
//	herald backup --to FILE.tar|FOLDER|- [--config FILE] [--data DIR]
//	herald restore --from FILE.tar|FOLDER [--config FILE] [--data DIR]
//	herald check-config FILE
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/heraldhq/herald/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first signal starts an orderly shutdown; giving the signals back their
		// default action makes a second one end the process at once.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage:
  herald serve [--demo] [--roles api,engine,worker] [--config FILE] [--data DIR] [--listen ADDR] [--metrics ADDR|off]
  herald backup --to FILE.tar|FOLDER|- [--config FILE] [--data DIR]
  herald restore --from FILE.tar|FOLDER [--config FILE] [--data DIR]
  herald check-config FILE
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "check-config":
		return checkConfig(args[1:], stdout, stderr)
	case "backup", "restore":
		return backupOrRestore(ctx, args[0], args[1:], stdout, stderr)
	case "replicate":
		// The replicator a control process with a replica starts; not for people.
		return app.Replicate(ctx, args[1:], os.Stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "set up a demo project on first start")
	configFile := fs.String("config", "", "YAML configuration file")
	data := fs.String("data", "", "data folder (overrides config)")
	listen := fs.String("listen", "", "API address host:port (overrides config)")
	roles := fs.String("roles", "", "what this process does, comma-separated: api, engine, worker (overrides config)")
	metrics := fs.String("metrics", "", `operator's address host:port for /metrics, /healthz and /readyz, "off" for none (overrides config)`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	app.Flags{Data: *data, Listen: *listen, Roles: *roles, Metrics: *metrics}.Apply(&cfg)
	a, err := app.New(ctx, cfg, app.Options{Demo: *demo, Stdout: stdout, Stderr: stderr})
	if errors.Is(err, context.Canceled) {
		return 0 // stopped while it waited for the control lease
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	if err := a.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	return 0
}

// loadConfig layers the defaults, the file (if any) and the environment.
func loadConfig(file string) (app.Config, error) {
	cfg := app.DefaultConfig()
	if file != "" {
		if err := app.LoadConfigFile(&cfg, file); err != nil {
			return cfg, err
		}
	}
	if err := app.ApplyEnv(&cfg, os.LookupEnv); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func checkConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cfg := app.DefaultConfig()
	if err := app.LoadConfigFile(&cfg, args[0]); err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "herald: %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", args[0])
	return 0
}

// backupOrRestore runs herald backup or herald restore.
func backupOrRestore(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "YAML configuration file, for its data folder")
	data := fs.String("data", "", "data folder (overrides config)")
	to := fs.String("to", "", "backup: where it goes: a FILE.tar, a new FOLDER, or - for standard output")
	from := fs.String("from", "", "restore: the backup, a FILE.tar or a FOLDER")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	if *data != "" {
		cfg.Data = *data
	}
	if cmd == "backup" {
		// With --to -, the backup is standard output: what it says goes to standard error.
		say := stdout
		if *to == "-" {
			say = stderr
		}
		err = app.Backup(ctx, cfg, *to, stdout, say)
	} else {
		err = app.Restore(ctx, *from, cfg.Data, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	return 0
}
