package prompts

// A Store that wraps another, as a cache does, may say so with a method
//
//	Unwrap() Store
//
// that returns the store it wraps. Such a store claims only the optional
// interfaces it implements itself, and passes those of the store it wraps
// through: EventLogOf and WebhookStoreOf find them on the first store down
// the chain that has them, as http.ResponseController finds the abilities
// of a wrapped http.ResponseWriter. So a wrapper never answers for an
// ability that what it wraps lacks. The store Unwrap returns is also where
// a read that must be fresh may go, past the wrapper's memory (httpapi's
// reads with Cache-Control: no-cache). A wrapper that must see every call
// of an ability (to log it, to check access) implements the ability; one
// whose reads must never be bypassed has no Unwrap. ActiveReader is
// never looked for through Unwrap: a store's reads are its own.

// unwrapper is a Store that wraps another.
type unwrapper interface {
	Unwrap() Store
}

// EventLogOf returns the event log s keeps: s itself when it is an
// EventLog, else the first store down its Unwrap chain that is one; false
// when none is.
func EventLogOf(s Store) (EventLog, bool) { return find[EventLog](s) }

// WebhookStoreOf returns the webhooks s keeps: s itself when it is a
// WebhookStore, else the first store down its Unwrap chain that is one;
// false when none is.
func WebhookStoreOf(s Store) (WebhookStore, bool) { return find[WebhookStore](s) }

// find returns the first store of s's Unwrap chain that is a T.
func find[T any](s Store) (T, bool) {
	for range 64 { // a chain that leads back to itself ends too
		if s == nil {
			break
		}
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(unwrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}
