package benchapp

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
)

// Scrape reads Herald's /metrics at opsURL and returns, for each line that
// starts with prefix, the rest of the line, in the order exposed.
func Scrape(opsURL, prefix string) ([]string, error) {
	resp, err := http.Get(opsURL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", opsURL, resp.Status)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			out = append(out, rest)
		}
	}
	return out, sc.Err()
}
