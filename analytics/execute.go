package analytics

import (
	"context"
	"database/sql"
)

// CheckReportDefinition checks the content of a report definition as creating one would,
// without storing it, and returns it as it would be stored: filters with URIs. An error
// is an *InputError naming the field under "reportDefinition.content", or a
// *NotFoundError.
func (s *Service) CheckReportDefinition(ctx context.Context, pid string, c ReportDefinitionContent) (ReportDefinitionContent, error) {
	out, _, err := s.prepareReportDefinition(ctx, pid, &c)
	return out, err
}

// Query runs a read query on the project's warehouse, its arguments bound as parameters,
// and hands the rows to scan.
func (s *Service) Query(ctx context.Context, pid, query string, args []any, scan func(*sql.Rows) error) error {
	return s.wh.Query(ctx, pid, query, args, scan)
}
