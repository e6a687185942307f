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

local adapter = {}

adapter.name = "deepseek"
adapter.version = "1.0.0"
adapter.endpoint = "/chat/completions"
adapter.stream_format = "sse"
adapter.headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "text/event-stream, application/json",
}

local null = json.null

local function present(v)
  return v ~= nil and v ~= null
end

local function nonempty(s)
  return type(s) == "string" and s ~= ""
end

local function args_string(a)
  if type(a) == "string" then return a end
  if type(a) == "table" then
    if next(a) == nil then return "{}" end
    return json.encode(a)
  end
  return "{}"
end

-- One history message, unified -> wire. Pure (the host caches the result
-- per message, so a long history is converted once, not every turn).
local function to_wire_message(m)
  local out = { role = m.role }
  local content = present(m.content) and m.content or ""
  if type(m.images) == "table" and #m.images > 0 then
    local parts = json.array({ { type = "text", text = content } })
    for _, img in ipairs(m.images) do
      local url = img
      if not img:find("^data:") then url = "data:image/jpeg;base64," .. img end
      parts[#parts + 1] = { type = "image_url", image_url = { url = url } }
    end
    out.content = parts
  else
    out.content = content
  end
  if type(m.tool_calls) == "table" and #m.tool_calls > 0 then
    local calls = json.array()
    for i, tc in ipairs(m.tool_calls) do
      local fn = tc["function"] or tc
      calls[i] = { id = tc.id, type = "function", ["function"] = { name = fn.name, arguments = args_string(fn.arguments) } }
    end
    out.tool_calls = calls
    if content == "" then out.content = null end
  end
  if m.role == "tool" then
    out.tool_call_id = m.tool_call_id
    if nonempty(m.name) then out.name = m.name end
  end
  return out
end

adapter.transform_message = to_wire_message

function adapter.transform_request(raw)
  local req = json.decode(raw)
  local body = { model = req.model, messages = json.array(), stream = req.stream == true }
  for i, m in ipairs(req.messages or {}) do
    body.messages[i] = to_wire_message(m)
  end
  if type(req.tools) == "table" and #req.tools > 0 then body.tools = req.tools end
  if present(req.temperature) then body.temperature = req.temperature end
  if present(req.max_tokens) then body.max_tokens = req.max_tokens end
  if body.stream then body.stream_options = { include_usage = true } end
  local opts = type(req.options) == "table" and req.options or {}
  body.thinking = { type = opts.think == true and "enabled" or "disabled" }
  return body
end

local function usage(u)
  if type(u) ~= "table" then return nil end
  local p = present(u.prompt_tokens) and u.prompt_tokens or 0
  local c = present(u.completion_tokens) and u.completion_tokens or 0
  local t = present(u.total_tokens) and u.total_tokens or (p + c)
  return { prompt_tokens = p, completion_tokens = c, total_tokens = t }
end

local function decode_args(s)
  if type(s) == "table" then return s end
  if not nonempty(s) then return {} end
  local ok, t = pcall(json.decode, s)
  if ok and type(t) == "table" then return t end
  return s -- left as text; the host reports it
end

local function error_text(e)
  if type(e) == "string" then return e end
  if type(e) == "table" and nonempty(e.message) then return e.message end
  return json.encode(e)
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if present(r.error) then return { error = error_text(r.error) } end
  local choice = type(r.choices) == "table" and r.choices[1] or {}
  local msg = type(choice.message) == "table" and choice.message or {}
  local calls = json.array()
  if type(msg.tool_calls) == "table" then
    for _, tc in ipairs(msg.tool_calls) do
      local fn = tc["function"] or {}
      calls[#calls + 1] = { id = nonempty(tc.id) and tc.id or nil, name = fn.name, arguments = decode_args(fn.arguments) }
    end
  end
  local reasoning = msg.reasoning_content
  if not nonempty(reasoning) then reasoning = msg.reasoning end
  return {
    content = type(msg.content) == "string" and msg.content or "",
    reasoning_content = nonempty(reasoning) and reasoning or nil,
    finish_reason = nonempty(choice.finish_reason) and choice.finish_reason or "stop",
    token_usage = usage(r.usage),
    tool_calls = calls,
    model = r.model,
  }
end

-- One SSE `data:` payload (the host stops at `[DONE]` itself). Called for
-- every chunk, so written without helper calls (each Lua call costs).
function adapter.transform_stream_chunk(data)
  local r = json.decode(data)
  local err = r.error
  if err ~= nil and err ~= null then return { error = error_text(err) } end
  local out = {}
  local choices = r.choices
  local choice = choices and choices[1]
  if choice and choice ~= null then
    local d = choice.delta
    if d and d ~= null then
      local c = d.content
      if c and c ~= null and c ~= "" then out.content = c end
      local reasoning = d.reasoning_content
      if not reasoning or reasoning == null or reasoning == "" then reasoning = d.reasoning end
      if reasoning and reasoning ~= null and reasoning ~= "" then out.reasoning = reasoning end
      local tcs = d.tool_calls
      if tcs and tcs ~= null and tcs[1] then
        local deltas = json.array()
        for i, tc in ipairs(tcs) do
          local fn = tc["function"]
          if not fn or fn == null then fn = {} end
          local id, fname, args, index = tc.id, fn.name, fn.arguments, tc.index
          deltas[i] = {
            index = (index ~= nil and index ~= null) and index or (i - 1),
            id = (id and id ~= null and id ~= "") and id or nil,
            name = (fname and fname ~= null and fname ~= "") and fname or nil,
            arguments = type(args) == "string" and args or nil,
          }
        end
        out.tool_call_deltas = deltas
      end
    end
    local fr = choice.finish_reason
    if fr and fr ~= null and fr ~= "" then out.finish_reason = fr end
  end
  local u = r.usage
  if u and u ~= null then out.usage = usage(u) end
  return out
end

function adapter.transform_error(status, body)
  local msg = body
  local ok, r = pcall(json.decode, body)
  if ok and type(r) == "table" and present(r.error) then msg = error_text(r.error) end
  if not nonempty(msg) then msg = "HTTP " .. tostring(status) end
  local out = { message = msg }
  local model = msg:match("^(.-) does not support tools")
  if model or msg:find("does not support tools", 1, true) then
    out.kind = "tools_unsupported"
    out.model = model
  elseif status == 404 and (msg:find("model", 1, true)) then
    out.kind = "model_not_found"
  elseif status == 402 then
    out.kind = "insufficient_balance"
  end
  return out
end

return adapter
