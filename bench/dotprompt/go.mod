module github.com/promptkit/prompts/bench/dotprompt

go 1.26.0

replace github.com/promptkit/prompts => ../..

require (
	github.com/google/dotprompt/go v0.0.0-20251121213842-db5416a4f7ce
	github.com/invopop/jsonschema v0.13.0
	github.com/promptkit/prompts v0.0.0
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.1 // indirect
	github.com/goccy/go-yaml v1.18.0 // indirect
	github.com/mailru/easyjson v0.9.1 // indirect
	github.com/mbleigh/raymond v0.0.0-20250414171441-6b3a58ab9e0a // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/wk8/go-ordered-map/v2 v2.1.8 // indirect
	golang.org/x/text v0.42.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
