package testkit

// Message is message, for the kit's tests.
var Message = message

// LeakPatience is leakPatience, for the kit's tests.
var LeakPatience = &leakPatience
