// Package wire holds the shapes of the API's bodies that more than one side
// speaks: subscriptions and channel configurations as the API takes and
// answers them. The API decodes
// requests into these types and encodes its answers from them; the console
// and the demo build them. The domain (notify) takes domain values, which the
// API translates these into.
//
// It imports only the standard library.
package wire
