package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"coupond/models"
	"coupond/services"
)

// runJobsList prints the installation's job runs, newest first, or with
// --merchant one merchant's (its own runs and its shares of installation
// runs). It is the operator's view: no token, the database itself.
func runJobsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("jobs list", stderr)
	dbURL := fs.databaseURL()
	merchant := fs.FlagSet.String("merchant", "", "list this merchant's runs instead of the installation's")
	job := fs.FlagSet.String("job", "", "only this job: "+fmt.Sprint(services.JobNames()))
	limit := fs.FlagSet.Int("limit", 20, "how many runs, 1 to 100")
	if err := fs.parse(args); err != nil {
		return err
	}
	var svc *services.Services
	var merchantID int64
	if *merchant != "" {
		s, m, done, err := openMerchant(ctx, *dbURL, *merchant)
		if err != nil {
			return err
		}
		defer done()
		svc, merchantID = s, m.ID
	} else {
		db, err := openDB(ctx, *dbURL, models.OpenOptions{})
		if err != nil {
			return err
		}
		defer models.Close(db)
		svc = services.New(db, services.Options{})
	}
	page, err := svc.JobRuns.ListInstallation(ctx, merchantID, services.JobRunFilter{Job: *job},
		services.PageArgs{First: *limit})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tJOB\tSTATUS\tSTARTED\tTOOK\tCOUNTS\tERROR")
	for _, r := range page.Items {
		took := "-"
		if r.FinishedAt != nil {
			took = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		errText := ""
		if r.Error != nil {
			errText = *r.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Job, r.Status, r.StartedAt.UTC().Format(time.RFC3339),
			took, r.Counts, errText)
	}
	return tw.Flush()
}
