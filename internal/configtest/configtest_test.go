package configtest

import (
	"errors"
	"testing"
)

type section struct{ Workers int }

func (s section) Validate() error {
	if s.Workers < 1 {
		return errors.New("workers: must be at least 1")
	}
	return nil
}

func TestCheckPassesARightSection(t *testing.T) {
	t.Parallel()
	Check(t, func() section { return section{Workers: 2} }, section.Validate,
		Bad("no workers", func(s *section) { s.Workers = 0 }, "workers: must be at least 1"))
}
