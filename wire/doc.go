// Package wire holds the shapes of the API's bodies that more than one side
// speaks: subscriptions, channel configurations and the runs of the run
// history as the API takes and answers them, and the URIs that name records
// on the wire, each built and parsed in one place. The API decodes requests
// into these types, translates them into the domain's values (ids, not
// URIs) for notify, and encodes its answers from them; the console reads
// and builds them.
//
// It imports only the standard library.
package wire
