// Package app wires one Herald process: it opens the data folder and its
// store, bootstraps the default domain and admin, and runs the API server
// until its context ends. Tests start the whole service in-process through it;
// signals are handled only in main.
package app
