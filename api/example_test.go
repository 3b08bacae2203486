package api_test

import (
	"fmt"
	"log"

	"github.com/promptkit/prompts/api"
)

// A webhook's receiver (after webhook.Verify) decodes the event with
// package api, and reads its resource as package prompts has it.
func ExampleEvent_Domain() {
	body := []byte(`{"id":"42","type":"project.created","project_id":"01KAKM6N8V0000000000000000","prompt_id":null,` +
		`"created_at":"2026-11-21T22:19:26.100000Z","data":{"id":"01KAKM6N8V0000000000000000","name":"Support",` +
		`"slug":"support","description":"","is_private":false,"created_at":"2026-11-21T22:19:26.100000Z"}}`)
	var e api.Event
	if err := api.UnmarshalLenient(body, &e); err != nil {
		log.Fatal(err)
	}
	ev, err := e.Domain()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.ID, ev.Type, ev.Project.Name, ev.CreatedAt.Format(api.TimeLayout))
	// Output: 42 project.created Support 2026-11-21T22:19:26.100000Z
}
