package testkit

// Message is message, for the kit's tests.
var Message = message
