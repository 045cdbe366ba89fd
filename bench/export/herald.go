package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

// model is sales to customers in regions, with an amount and a cost.
const model = `CREATE DATASET {dataset.regions} VISUAL(TITLE "Regions");
CREATE ATTRIBUTE {attr.regions.id} VISUAL(TITLE "Region") AS KEYS {f_regions.id} FULLSET;
ALTER DATASET {dataset.regions} ADD {attr.regions.id};
ALTER ATTRIBUTE {attr.regions.id} ADD LABELS {label.regions.name} VISUAL(TITLE "Region") AS {f_regions.nm_name};
CREATE DATASET {dataset.customers} VISUAL(TITLE "Customers");
CREATE ATTRIBUTE {attr.customers.id} VISUAL(TITLE "Customer") AS KEYS {f_customers.id} FULLSET;
ALTER DATASET {dataset.customers} ADD {attr.customers.id};
ALTER ATTRIBUTE {attr.customers.id} ADD LABELS {label.customers.name} VISUAL(TITLE "Customer") AS {f_customers.nm_name};
ALTER DATATYPE {f_customers.id} INT;
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Order") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount") AS {f_sales.f_amount};
CREATE FACT {fact.sales.cost} VISUAL(TITLE "Cost") AS {f_sales.f_cost};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount}, {fact.sales.cost};
ALTER ATTRIBUTE {attr.regions.id} ADD KEYS {f_sales.regions_id};
ALTER ATTRIBUTE {attr.customers.id} ADD KEYS {f_sales.customers_id};
ALTER DATATYPE {f_sales.id} INT;
ALTER DATATYPE {f_sales.f_amount} DECIMAL(15,2);
ALTER DATATYPE {f_sales.f_cost} DECIMAL(15,2);
SYNCHRONIZE {dataset.regions}, {dataset.customers}, {dataset.sales};`

// metrics are the report's three metrics, in the in-memory report's formats.
var metrics = [3]struct{ title, expression, format string }{
	{"Revenue", "SELECT SUM({fact.sales.amount})", "$#,##0.00"},
	{"Orders", "SELECT COUNT({attr.sales.id})", "#,##0"},
	{"Margin", "SELECT 1 - SUM({fact.sales.cost}) / SUM({fact.sales.amount})", "0.0%"},
}

// herald is a Herald running in this process.
type herald struct {
	c   *client.Client
	url string
}

// project is a project of the model, filled with generated sales.
type project struct {
	md        string // /svc/md/<pid>
	customers int
	labels    [2]string // region and customer names
	metrics   [3]string
}

// startHerald starts Herald with its data in dir. Its temporary tokens outlive
// the whole run, so no timed request meets a token renewal.
func startHerald(ctx context.Context, dir string) (*herald, func(), error) {
	b, stop, err := benchapp.Start(ctx, dir, func(c *app.Config) { c.Auth.TTLifetime = 6 * time.Hour }, app.Options{})
	if err != nil {
		return nil, nil, err
	}
	return &herald{c: b.Client, url: b.App.URL()}, stop, nil
}

// newProject creates a project of the model and loads it with generated data
// written in dir: customers customers spread over the regions, each with
// perCustomer sales, so that a report by region and customer has one row per
// customer.
func (h *herald) newProject(ctx context.Context, dir string, customers, perCustomer int) (*project, error) {
	if err := writeData(dir, customers, perCustomer); err != nil {
		return nil, err
	}
	uri, err := h.c.CreateProject(ctx, fmt.Sprintf("Export bench, %d customers", customers), "")
	if err != nil {
		return nil, err
	}
	p := &project{md: "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/"), customers: customers}
	if err := h.c.Do(ctx, "POST", p.md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": model}}, nil); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	for _, ds := range []string{"regions", "customers", "sales"} {
		if err := benchapp.PostCSVFile(ctx, h.c, h.url+p.md+"/datasets/dataset."+ds+"/data", filepath.Join(dir, ds+".csv")); err != nil {
			return nil, fmt.Errorf("load %s: %w", ds, err)
		}
	}
	var ids struct {
		Identifiers []struct{ Identifier, URI string } `json:"identifiers"`
	}
	err = h.c.Do(ctx, "POST", p.md+"/identifiers", map[string]any{"identifierToUri": []string{"label.regions.name", "label.customers.name"}}, &ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids.Identifiers {
		switch id.Identifier {
		case "label.regions.name":
			p.labels[0] = id.URI
		case "label.customers.name":
			p.labels[1] = id.URI
		}
	}
	for i, m := range metrics {
		var out struct{ URI string }
		err := h.c.Do(ctx, "POST", p.md+"/obj", map[string]any{"metric": map[string]any{"meta": map[string]any{"title": m.title},
			"content": map[string]any{"expression": m.expression, "format": m.format}}}, &out)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", m.title, err)
		}
		p.metrics[i] = out.URI
	}
	return p, nil
}

// writeData writes regions.csv, customers.csv and sales.csv into dir. Customer
// i is in region i mod 5; its sales have amounts and costs that vary with i.
func writeData(dir string, customers, perCustomer int) error {
	return writeCSVs(dir, map[string]func(w *bufio.Writer){
		"regions.csv": func(w *bufio.Writer) {
			w.WriteString("id,nm_name\n")
			for i, r := range regions {
				fmt.Fprintf(w, "r%d,%s\n", i, r)
			}
		},
		"customers.csv": func(w *bufio.Writer) {
			w.WriteString("id,nm_name\n")
			for i := range customers {
				fmt.Fprintf(w, "%d,%s\n", i, customerName(i))
			}
		},
		"sales.csv": func(w *bufio.Writer) {
			w.WriteString("id,f_amount,f_cost,regions_id,customers_id\n")
			id := 0
			for i := range customers {
				for s := range perCustomer {
					cents, cost := sale(i, s)
					fmt.Fprintf(w, "%d,%d.%02d,%d.%02d,r%d,%d\n", id, cents/100, cents%100, cost/100, cost%100, i%len(regions), i)
					id++
				}
			}
		},
	})
}

// writeCSVs writes each file of dir with its function.
func writeCSVs(dir string, files map[string]func(*bufio.Writer)) error {
	for name, fill := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		fill(w)
		err = w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
