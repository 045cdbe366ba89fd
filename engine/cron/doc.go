// Package cron parses six-field cron expressions in the Spring syntax that subscription
// triggers carry and computes their fire times in a time zone. Parse rejects expressions that
// are malformed or can never fire; Schedule.Next and Schedule.MinGap serve the scheduler and the
// API's minimum-interval check, and Describe puts an expression into English words for people
// ("Every 15 minutes from 09:00 to 17:45 on Monday to Friday").
//
// # Syntax
//
// An expression has six fields separated by spaces, seconds first:
//
//	second  minute  hour  day-of-month  month  day-of-week
//	0-59    0-59    0-23  1-31          1-12   0-7 (0 and 7 are Sunday)
//
// Each field is a comma-separated list of items. An item is `*`, a number, a range `a-b`, or
// one of those followed by a step: `*/n`, `a-b/n`, or `a/n`, which means from a to the end of
// the field every n (`0/5` in the minute field is 0,5,...,55). Months may be written JAN-DEC
// and days of the week SUN-SAT, in any case, also inside ranges (`MON-FRI`). `?` is accepted in
// the two day fields and means `*`. Following Spring, `*` in the day-of-week field counts from
// Monday when it carries a step (`*/2` is MON,WED,FRI,SUN), and Sunday at the start of a range
// counts as 0 (`SUN-SAT` is every day). The Quartz extensions `L`, `W` and `#` are not
// supported.
//
// Day-of-month and day-of-week must both match, as in Spring: `0 0 0 13 * FRI` fires on Friday
// the 13th only. (Classic Unix cron fires when either matches.)
//
// # Time zones and daylight saving
//
// The fields are read as wall-clock time in the location passed to Next, and each wall-clock
// time the schedule names fires at most once, at the first instant the clock shows that time or
// a later one:
//
//   - A time that does not exist because the clock jumps forward (02:30 on the spring-forward
//     day in Europe/Prague) fires at the first instant after the jump (03:00). Several times
//     inside one jump fire once, together, at that instant.
//   - A time that occurs twice because the clock falls back fires at its first occurrence only.
//     While the clock repeats an hour, nothing fires a second time: a schedule that fires every
//     minute fires once for each minute of that hour, during its first pass.
//
// MinGap measures intervals in wall-clock time. Around a spring-forward jump two fires can be
// closer in real time, by up to the size of the jump: `0 30 * * * *` fires at 01:30 and, for
// the skipped 02:30, at 03:00 in Europe/Prague on that day.
package cron
