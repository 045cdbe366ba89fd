package apptest

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Metrics reads the /metrics of the operator's listener at opsURL into a map
// from series (name and labels as exposed, labels sorted by name) to value.
func Metrics(opsURL string) (map[string]float64, error) {
	res, err := http.Get(opsURL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", opsURL, res.Status)
	}
	out := make(map[string]float64)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// ByLabel returns the values of the series of metric in m that have label as
// their one label, by the label's value: ByLabel(m, "x_bucket", "le") gives
// a histogram's cumulative counts by upper bound, as exposed ("+Inf" too).
func ByLabel(m map[string]float64, metric, label string) map[string]float64 {
	out := make(map[string]float64)
	for series, v := range m {
		if value, ok := strings.CutPrefix(series, metric+"{"+label+`="`); ok && strings.HasSuffix(value, `"}`) {
			out[strings.TrimSuffix(value, `"}`)] = v
		}
	}
	return out
}
