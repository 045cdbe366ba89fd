package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

const (
	// maxSubscriptions is the most subscriptions a burst makes; more
	// deliveries come from more channels on each.
	maxSubscriptions = 1000
	// apiConcurrency is how many API requests making a burst go at once.
	apiConcurrency = 8
	// minLead is the least time left between the last subscription made
	// and the instant they fire at.
	minLead = 2 * time.Second
)

// burst is the deliveries of one scenario: subscriptions that all fire at
// one instant, each mailing perRun channels (a pool of one channel per
// subscription; subscription i mails channel i and the perRun-1 after it).
type burst struct {
	subscriptions, perRun int
}

// burstOf makes n deliveries: n subscriptions of one channel up to 1,000,
// else 1,000 subscriptions of n/1,000 channels each.
func burstOf(n int) (burst, error) {
	switch {
	case n >= 1 && n <= maxSubscriptions:
		return burst{subscriptions: n, perRun: 1}, nil
	case n > maxSubscriptions && n%maxSubscriptions == 0:
		return burst{subscriptions: maxSubscriptions, perRun: n / maxSubscriptions}, nil
	}
	return burst{}, fmt.Errorf("-n %d: 1 to %d deliveries, or a multiple of %d", n, maxSubscriptions, maxSubscriptions)
}

// deliveries is how many deliveries the instant makes.
func (b burst) deliveries() int { return b.subscriptions * b.perRun }

// prepare creates the burst through the API at apiURL as the domain admin:
// a project, the channels, then the subscriptions, due on a whole second far
// enough ahead for them all to be made (twice the time the channels took,
// plus minLead). It returns that instant.
func (b burst) prepare(ctx context.Context, apiURL string) (time.Time, error) {
	c := client.New(apiURL, client.WithUserAgent("herald-scaleout-bench"))
	login, err := c.Login(ctx, app.DefaultConfig().AdminLogin, benchapp.AdminPassword)
	if err != nil {
		return time.Time{}, fmt.Errorf("log in: %w", err)
	}
	project, err := c.CreateProject(ctx, "Scale-out bench", "")
	if err != nil {
		return time.Time{}, fmt.Errorf("create the project: %w", err)
	}
	began := time.Now()
	chans, err := b.createChannels(ctx, c, login.Profile)
	if err != nil {
		return time.Time{}, err
	}
	at := time.Now().Add(2*time.Since(began) + minLead).UTC().Truncate(time.Second).Add(time.Second)
	base := project + "/users/" + login.Profile[strings.LastIndexByte(login.Profile, '/')+1:] + "/subscriptions"
	if err := b.createSubscriptions(ctx, c, base, chans, at); err != nil {
		return time.Time{}, err
	}
	if late := time.Now(); late.After(at.Add(-minLead / 2)) {
		return time.Time{}, fmt.Errorf("the subscriptions were made at %s, too close to their instant %s", late.UTC().Format(time.TimeOnly), at.Format(time.TimeOnly))
	}
	return at, nil
}

// createChannels makes one e-mail channel per subscription, to
// team<i>@example.com, and returns their URIs.
func (b burst) createChannels(ctx context.Context, c *client.Client, profile string) ([]string, error) {
	uris := make([]string, b.subscriptions)
	err := parallel(ctx, b.subscriptions, func(ctx context.Context, i int) error {
		body := map[string]any{"channelConfiguration": map[string]any{
			"configuration": map[string]any{"emailConfiguration": map[string]any{"to": fmt.Sprintf("team%d@example.com", i)}},
			"meta":          map[string]any{"title": fmt.Sprintf("Mail %d", i)},
		}}
		var out struct {
			ChannelConfiguration struct {
				Meta struct {
					URI string `json:"uri"`
				} `json:"meta"`
			} `json:"channelConfiguration"`
		}
		if err := c.Do(ctx, http.MethodPost, profile+"/channelConfigurations", body, &out); err != nil {
			return fmt.Errorf("channel %d: %w", i, err)
		}
		uris[i] = out.ChannelConfiguration.Meta.URI
		return nil
	})
	return uris, err
}

// createSubscriptions makes the subscriptions under base, each with a
// six-field cron of the instant at (UTC) and perRun of the channels.
func (b burst) createSubscriptions(ctx context.Context, c *client.Client, base string, chans []string, at time.Time) error {
	cron := fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour())
	return parallel(ctx, b.subscriptions, func(ctx context.Context, i int) error {
		to := make([]string, b.perRun)
		for j := range to {
			to[j] = chans[(i+j)%len(chans)]
		}
		body := map[string]any{"subscription": map[string]any{
			"triggers":  []any{map[string]any{"timerEvent": map[string]any{"cronExpression": cron}}},
			"condition": map[string]any{"condition": map[string]any{"expression": "true"}},
			"subject":   map[string]any{"template": map[string]any{"expression": fmt.Sprintf("Bench %d", i)}},
			"message":   map[string]any{"template": map[string]any{"expression": fmt.Sprintf("Number %d", i)}},
			"channels":  to,
			"meta":      map[string]any{"title": fmt.Sprintf("S%d", i)},
		}}
		if err := c.Do(ctx, http.MethodPost, base, body, nil); err != nil {
			return fmt.Errorf("subscription %d: %w", i, err)
		}
		return nil
	})
}

// parallel calls f for 0..n-1, apiConcurrency at a time, and returns the
// first error.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(apiConcurrency)
	for i := range n {
		g.Go(func() error { return f(ctx, i) })
	}
	return g.Wait()
}
