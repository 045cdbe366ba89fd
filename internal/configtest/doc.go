// Package configtest checks a configuration section the way every section of
// Herald's configuration is held: its defaults are valid, and each value that
// makes no sense is refused with an error naming its key.
package configtest
