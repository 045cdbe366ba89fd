package client_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/client"
)

// The examples run against a Herald with its demo project, started in this
// process on a loopback port (see main_test.go): heraldURL is its address,
// adminLogin and adminPassword its domain admin, and revenueByRegion the URI
// of the demo's report "Revenue by region".

// Log in: the client keeps the two tokens of the login and renews the
// temporary one as it expires.
func ExampleClient_Login() {
	ctx := context.Background()
	c := client.New(heraldURL)
	res, err := c.Login(ctx, adminLogin, adminPassword)
	if err != nil {
		log.Fatal(err)
	}
	projects, err := c.Projects(ctx, res.Profile)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range projects {
		fmt.Println(p.Meta.Title)
	}
	// Output:
	// Herald demo
}

// Execute a report, then read its data result: the revenue of each region.
func ExampleClient_ExecuteReport() {
	ctx := context.Background()
	c := client.New(heraldURL, client.WithLogin(adminLogin, adminPassword))
	res, err := c.ExecuteReport(ctx, revenueByRegion)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content.ReportView.ReportName)
	data, err := c.DataResult(ctx, res.Content.DataResult)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(data.OverallSize.Rows, "rows")
	for _, row := range data.Data {
		fmt.Println(*row[0])
	}
	// Output:
	// Revenue by region
	// 5 rows
	// 236194.37
	// 497091.71
	// 552568.36
	// 327201.8
	// 681443.11
}

// Export an executed report: the client starts the export, waits for the
// file and downloads it.
func ExampleClient_Export() {
	ctx := context.Background()
	c := client.New(heraldURL, client.WithLogin(adminLogin, adminPassword))
	res, err := c.ExecuteReport(ctx, revenueByRegion)
	if err != nil {
		log.Fatal(err)
	}
	f, err := c.Export(ctx, res.Meta.URI, "CSV")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Name, f.ContentType)
	rows, err := csv.NewReader(bytes.NewReader(f.Data)).ReadAll()
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range rows {
		fmt.Println(strings.Join(row, " | "))
	}
	// Output:
	// Revenue by region.csv text/csv; charset=utf-8
	// Region | Revenue
	// Central | 236194.37
	// East | 497091.71
	// North | 552568.36
	// South | 327201.8
	// West | 681443.11
}

// Do calls any route of the API with the client's login; an error answer
// is an *Error, whose status StatusOf tells.
func ExampleClient_Do() {
	ctx := context.Background()
	c := client.New(heraldURL, client.WithLogin(adminLogin, adminPassword))
	err := c.Do(ctx, http.MethodGet, "/svc/projects/no-such-project", nil, nil)
	fmt.Println(client.StatusOf(err))
	// Output:
	// 404
}
