package benchapp

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/client"
)

// AdminPassword is the domain admin's password in every benchmark.
const AdminPassword = "Bench-passw0rd"

// SalesMAQL is a model of sales in stores on days: the shape the load and
// maintenance benchmarks fill with generated rows.
const SalesMAQL = `CREATE DATASET {dataset.stores} VISUAL(TITLE "Stores");
CREATE ATTRIBUTE {attr.stores.id} VISUAL(TITLE "Store") AS KEYS {f_stores.id} FULLSET;
ALTER DATASET {dataset.stores} ADD {attr.stores.id};
ALTER ATTRIBUTE {attr.stores.id} ADD LABELS {label.stores.name} VISUAL(TITLE "Store Name") AS {f_stores.nm_name};
INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "sold_on", TITLE "Sold On");
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Sale") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount") AS {f_sales.f_amount};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_sales.stores_id};
ALTER ATTRIBUTE {sold_on.date} ADD KEYS {f_sales.dt_sold_on_id};
ALTER DATATYPE {f_sales.id} INT;
ALTER DATATYPE {f_sales.f_amount} DECIMAL(15,2);
SYNCHRONIZE {dataset.stores}, {dataset.sales};`

// Herald is a running Herald and a client logged in as its domain admin.
type Herald struct {
	App    *app.App
	Client *client.Client
	// Profile is the admin's profile URI.
	Profile string
}

// Start runs Herald with its data in dir until stop is called. change, when
// not nil, adjusts the configuration; opt gives the process options (a nil
// Logger discards the log).
func Start(ctx context.Context, dir string, change func(*app.Config), opt app.Options) (h *Herald, stop func(), err error) {
	cfg := app.DefaultConfig()
	cfg.Data, cfg.Listen, cfg.Metrics.Listen, cfg.Log.Level = dir, "127.0.0.1:0", "", "warn"
	if change != nil {
		change(&cfg)
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	opt.Stdout = io.Discard
	opt.Getenv = func(k string) string {
		if k == "HERALD_ADMIN_PASSWORD" {
			return AdminPassword
		}
		return ""
	}
	a, err := app.New(ctx, cfg, opt)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	runCtx, cancel := context.WithCancel(ctx)
	go func() { done <- a.Run(runCtx) }()
	stop = func() { cancel(); <-done }
	c := client.New(a.URL(), client.WithUserAgent("bench"))
	login, err := c.Login(ctx, cfg.AdminLogin, AdminPassword)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return &Herald{App: a, Client: c, Profile: login.Profile}, stop, nil
}

// Metadata is the metadata URI (/svc/md/<project>) of the admin's first
// project: the demo's, in a benchmark that started with it.
func (h *Herald) Metadata(ctx context.Context) (string, error) {
	var projects struct {
		Projects []struct {
			Project struct {
				Links map[string]string `json:"links"`
			} `json:"project"`
		} `json:"projects"`
	}
	if err := h.Client.Do(ctx, "GET", h.Profile+"/projects", nil, &projects); err != nil {
		return "", err
	}
	if len(projects.Projects) == 0 {
		return "", errors.New("the admin has no project")
	}
	return projects.Projects[0].Project.Links["metadata"], nil
}
