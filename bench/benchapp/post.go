package benchapp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/heraldhq/herald/client"
)

// PostCSV posts body to url as text/csv with c's session, as a data load
// does, and returns the answer's body; any status but 200 is an error that
// quotes it.
func PostCSV(ctx context.Context, c *client.Client, url string, body io.Reader) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("User-Agent", "bench")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, data)
	}
	return string(data), nil
}

// PostCSVFile is PostCSV of a file's content.
func PostCSVFile(ctx context.Context, c *client.Client, url, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = PostCSV(ctx, c, url, f)
	return err
}
