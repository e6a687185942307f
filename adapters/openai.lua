-- OpenAI-compatible chat completions adapter (/v1/chat/completions, SSE).
--
-- Works with OpenAI, Ollama's /v1, llama.cpp server, vLLM, LM Studio and
-- other hosts speaking the same protocol. The source's base_url is the host
-- root (http://127.0.0.1:11434); the endpoint adds /v1/chat/completions.
-- Protocol specifics kept here: tool call arguments are a JSON *string* on
-- the wire (history is encoded to one, responses decoded from one), a tool
-- result answers `tool_call_id`, images are `image_url` content parts,
-- streamed tool calls arrive as fragments keyed by `index` (the host merges
-- them), usage comes in a final chunk with empty `choices` when
-- stream_options.include_usage is set, and errors are
-- {"error": {"message", "type", "param", "code"}}.

local adapter = {}

adapter.name = "openai"
adapter.version = "1.0.0"
adapter.endpoint = "/v1/chat/completions"
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
  return body
end

-- Every field read below may be null, missing or of another type (a server
-- bug, a proxy, a fuzzer): each is type-checked, so no shape of a JSON value
-- raises a Lua error (issue 14). Wrong-typed fields count as absent.

local function count(v)
  if type(v) == "number" and v >= 0 then return v end
  return nil
end

local function usage(u)
  if type(u) ~= "table" then return nil end
  local p = count(u.prompt_tokens) or 0
  local c = count(u.completion_tokens) or 0
  local t = count(u.total_tokens) or (p + c)
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

local function table_or_nil(v)
  if type(v) == "table" then return v end
  return nil
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if type(r) ~= "table" then return { error = "the response is not a JSON object" } end
  if present(r.error) then return { error = error_text(r.error) } end
  local choices = table_or_nil(r.choices)
  local choice = choices and table_or_nil(choices[1]) or {}
  local msg = table_or_nil(choice.message) or {}
  local calls = json.array()
  local tcs = table_or_nil(msg.tool_calls)
  if tcs then
    for _, tc in ipairs(tcs) do
      local fn = type(tc) == "table" and table_or_nil(tc["function"])
      if fn and nonempty(fn.name) then
        calls[#calls + 1] = { id = nonempty(tc.id) and tc.id or nil, name = fn.name, arguments = decode_args(fn.arguments) }
      end
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
    model = nonempty(r.model) and r.model or nil,
  }
end

-- One SSE `data:` payload (the host stops at `[DONE]` itself). Called for
-- every chunk, so written without helper calls (each Lua call costs).
-- A tool-call delta's `index` is passed on only when it is a whole number
-- >= 0; without one the host continues the call being streamed (or starts a
-- new one when the delta names a function).
function adapter.transform_stream_chunk(data)
  local r = json.decode(data)
  if type(r) ~= "table" then return nil end
  local err = r.error
  if err ~= nil and err ~= null then return { error = error_text(err) } end
  local out = {}
  local choices = r.choices
  local choice = type(choices) == "table" and choices[1] or nil
  if type(choice) == "table" then
    local d = choice.delta
    if type(d) == "table" then
      local c = d.content
      if type(c) == "string" and c ~= "" then out.content = c end
      local reasoning = d.reasoning_content
      if type(reasoning) ~= "string" or reasoning == "" then reasoning = d.reasoning end
      if type(reasoning) == "string" and reasoning ~= "" then out.reasoning = reasoning end
      local tcs = d.tool_calls
      if type(tcs) == "table" and tcs[1] ~= nil then
        local deltas = json.array()
        for _, tc in ipairs(tcs) do
          if type(tc) == "table" then
            local fn = tc["function"]
            local fname, args
            if type(fn) == "table" then fname, args = fn.name, fn.arguments end
            local id, index = tc.id, tc.index
            deltas[#deltas + 1] = {
              index = (type(index) == "number" and index >= 0 and index % 1 == 0) and index or nil,
              id = (type(id) == "string" and id ~= "") and id or nil,
              name = (type(fname) == "string" and fname ~= "") and fname or nil,
              arguments = type(args) == "string" and args or nil,
            }
          end
        end
        if deltas[1] ~= nil then out.tool_call_deltas = deltas end
      end
    end
    local fr = choice.finish_reason
    if type(fr) == "string" and fr ~= "" then out.finish_reason = fr end
  end
  local u = r.usage
  if type(u) == "table" then out.usage = usage(u) end
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
  end
  return out
end

-- Embeddings (issue 19): POST /v1/embeddings {model, input = [texts],
-- encoding_format = "float"} -> {data = [{index, embedding}], model}; the
-- vectors are put back in the order sent (by `index`).
adapter.embed_endpoint = "/v1/embeddings"

function adapter.transform_embed_request(raw)
  local r = json.decode(raw)
  return json.encode({ model = r.model, input = r.input, encoding_format = "float" })
end

-- {vectors = [[numbers]], model} or {error = text}.
function adapter.transform_embed_response(raw)
  local r = json.decode(raw)
  if type(r) ~= "table" then return { error = "not a JSON object" } end
  if present(r.error) then
    local e = r.error
    return { error = type(e) == "table" and tostring(e.message) or tostring(e) }
  end
  if type(r.data) ~= "table" then return { error = "no data in the answer" } end
  local out = {}
  for k = 1, #r.data do
    local d = r.data[k]
    local i = (type(d.index) == "number" and d.index or (k - 1)) + 1
    if type(d.embedding) ~= "table" then return { error = "an item without an embedding" } end
    out[i] = d.embedding
  end
  return { vectors = out, model = r.model }
end

return adapter
