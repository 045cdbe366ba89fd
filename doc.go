// Package herald holds the files of the repository that its programs embed: the demo
// project that "herald serve --demo" sets up, kept under testdata/demo.
package herald
