package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/analytics/demo"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// Demo subscription: every minute, while there is revenue, mail the admin the revenue
// and the revenue report as a PDF.
const (
	demoCron      = "0 * * * * *"
	demoCondition = "f:executeMetric('%s') > 0"
	demoMessage   = "Revenue so far: ${f:executeMetric('%s')}"
)

// setupDemo creates the demo project, owned by the domain admin, with its data, metrics
// and reports, and an e-mail channel and subscription for the admin. It prints where the
// project is.
func (a *App) setupDemo(ctx context.Context) error {
	admin, err := a.store.UserByLogin(ctx, a.cfg.AdminLogin)
	if err != nil {
		return err
	}
	now := a.opt.Clock.Now()
	p := store.Project{ID: store.NewID(32), Title: "Herald demo", Summary: "Sales of products in regions, 2024 and 2025",
		GuidedNavigation: 1, State: store.ProjectEnabled, Author: admin.ID, Contributor: admin.ID, Created: now, Updated: now}
	if err := a.store.CreateProject(ctx, p, store.RoleAdmin); err != nil {
		return err
	}
	files, err := fs.Sub(herald.Demo, "testdata/demo")
	if err != nil {
		return err
	}
	proj, err := demo.Setup(ctx, a.md, files, p.ID, admin.ID)
	if err != nil {
		return err
	}
	// The demo's channel and subscription go through the same rules as the API's.
	to, err := json.Marshal(map[string]string{"to": a.cfg.AdminLogin})
	if err != nil {
		return err
	}
	ch, err := a.notify.CreateChannel(ctx, admin.ID, notify.ChannelInput{Title: "Admin mailbox", Kind: email.Descriptor.Kind, Config: to})
	if err != nil {
		return err
	}
	revenue, report := proj.Metrics["metric.revenue"], proj.Reports["report.revenue_by_region"]
	sub := notify.SubscriptionInput{
		Title:       "Revenue every minute",
		Triggers:    []notify.TriggerInput{{Cron: new(demoCron)}},
		Condition:   new(fmt.Sprintf(demoCondition, revenue)),
		Message:     notify.TemplateInput{Text: new(fmt.Sprintf(demoMessage, revenue))},
		Channels:    []string{ch.ID},
		Attachments: []notify.AttachmentInput{{Report: report, Formats: []string{"PDF"}}},
	}
	if _, err := a.notify.CreateSubscription(ctx, p.ID, admin.ID, sub); err != nil {
		return err
	}
	fmt.Fprintf(a.opt.Stdout, "Created the demo project /svc/projects/%s: reports at /svc/md/%s/query/reports; "+
		"it mails %s every minute\n", p.ID, p.ID, a.cfg.AdminLogin)
	return nil
}
