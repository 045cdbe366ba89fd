package demo

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "regenerate the demo data under testdata/demo")

// dir is the demo project in the repository.
const dir = "../../testdata/demo"

var (
	regions = []struct {
		id, name string
		weight   float64
	}{{"r1", "North", 1.2}, {"r2", "South", 0.8}, {"r3", "East", 1.0}, {"r4", "West", 1.5}, {"r5", "Central", 0.5}}
	products = []struct {
		name, category string
		cents          int64
	}{
		{"Laptop", "Hardware", 89900}, {"Monitor", "Hardware", 24900}, {"Keyboard", "Hardware", 4900},
		{"Mouse", "Hardware", 1900}, {"Docking station", "Hardware", 15900}, {"Office suite", "Software", 12900},
		{"Antivirus", "Software", 3900}, {"Design tool", "Software", 29900}, {"Backup service", "Services", 900},
		{"Installation", "Services", 7900}, {"Training day", "Services", 49900}, {"Support plan", "Services", 19900},
	}
)

// generate makes the demo's CSV files: sales every day of 2024 and 2025, a few orders a
// day, more in spring and autumn and growing in 2025. The same seed gives the same files.
func generate() map[string][]byte {
	rng := rand.New(rand.NewPCG(2024, 2025))
	var r, p, s bytes.Buffer
	r.WriteString("id,nm_name\n")
	for _, x := range regions {
		fmt.Fprintf(&r, "%s,%s\n", x.id, x.name)
	}
	p.WriteString("id,nm_name,category\n")
	for i, x := range products {
		fmt.Fprintf(&p, "%d,%s,%s\n", i+1, x.name, x.category)
	}
	var total float64
	for _, x := range regions {
		total += x.weight
	}
	s.WriteString("id,f_amount,f_quantity,regions_id,products_id,dt_sold_on_id\n")
	id := 0
	for day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() < 2026; day = day.AddDate(0, 0, 1) {
		season := 1 + 0.3*math.Sin(2*math.Pi*float64(day.YearDay())/182.5)
		growth := 1.0
		if day.Year() == 2025 {
			growth = 1.1
		}
		for range 3 + rng.IntN(4) {
			id++
			pick := rng.Float64() * total
			region := regions[len(regions)-1].id
			for _, x := range regions {
				if pick < x.weight {
					region = x.id
					break
				}
				pick -= x.weight
			}
			product := rng.IntN(len(products))
			qty := 1 + rng.IntN(5)
			cents := int64(float64(products[product].cents*int64(qty)) * season * growth * (0.9 + 0.2*rng.Float64()))
			fmt.Fprintf(&s, "%d,%d.%02d,%d,%s,%d,%s\n", id, cents/100, cents%100, qty, region, product+1, day.Format(time.DateOnly))
		}
	}
	return map[string][]byte{"regions.csv": r.Bytes(), "products.csv": p.Bytes(), "sales.csv": s.Bytes()}
}

// TestDemoData checks that the committed data is what the generator makes; -update
// writes it.
func TestDemoData(t *testing.T) {
	t.Parallel()
	for name, data := range generate() {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from the generator's output; run go test ./analytics/demo -update", path)
		}
	}
}
