-- DeepSeek chat completions adapter (https://api.deepseek.com, SSE).
--
-- OpenAI-like wire format with DeepSeek's own rules kept here:
-- * endpoint is /chat/completions on the host root (no /v1);
-- * thinking is off unless the request asks for it (options.think = true):
--   {"thinking": {"type": "disabled"}} is sent explicitly, because the
--   current models think by default;
-- * reasoning arrives as `reasoning_content` and is kept apart from the
--   answer; it is never sent back in history (the API rejects it there);
-- * tool call arguments are a JSON string on the wire, like OpenAI;
-- * errors are {"error": {"message", "type", "param", "code"}}; 402 means the
--   account has no balance.
-- Built on openai.lua with adapter_base(): only the differences are here.

local adapter = adapter_base("openai")

adapter.name = "deepseek"
adapter.version = "1.0.0"
adapter.endpoint = "/chat/completions"

local openai_request = adapter.transform_request
local openai_error = adapter.transform_error

function adapter.transform_request(raw)
  local body = openai_request(raw)
  local req = json.decode(raw)
  local opts = type(req.options) == "table" and req.options or {}
  body.thinking = { type = opts.think == true and "enabled" or "disabled" }
  return body
end

function adapter.transform_error(status, body)
  local out = openai_error(status, body)
  if status == 402 then out.kind = "insufficient_balance" end
  return out
end

return adapter
