-- Ollama native chat API adapter (/api/chat, NDJSON stream).
--
-- Contract (seed 000 section 9, issue 3): the host hands this script the
-- unified request as JSON text and gets back the protocol body; it hands
-- over each HTTP body / NDJSON line and gets back the unified shapes:
--   response: {content, reasoning_content, finish_reason, token_usage, tool_calls, model}
--   chunk:    {content, reasoning, tool_call_deltas = {{index, id, name, arguments}},
--              done, finish_reason, usage, error}
-- Ollama specifics kept here: tool call arguments are JSON objects (never
-- strings), a tool result names its tool in `tool_name`, reasoning is
-- `thinking`, usage is `prompt_eval_count` / `eval_count` on the final line,
-- options go under `options` (num_ctx, num_predict, temperature), keep_alive
-- is top level, and errors are `{"error": "text"}`.

local adapter = {}

adapter.name = "ollama"
adapter.version = "1.0.0"
adapter.endpoint = "/api/chat"
adapter.stream_format = "ndjson"
adapter.headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/x-ndjson, application/json",
}

local null = json.null

local function present(v)
  return v ~= nil and v ~= null
end

local function nonempty(s)
  return type(s) == "string" and s ~= ""
end

-- Arguments travel to /api/chat as an object; history may hold a JSON string.
local function args_object(a)
  if type(a) == "table" then return a end
  if type(a) == "string" and a ~= "" then
    local ok, t = pcall(json.decode, a)
    if ok and type(t) == "table" then return t end
  end
  return {}
end

-- One history message, unified -> /api/chat. Pure (the host caches the
-- result per message, so a long history is converted once, not every turn).
-- The unified message is already close to the wire shape: it is changed in
-- place, without helper calls (each Lua call costs).
function adapter.transform_message(m)
  local c = m.content
  if c == nil or c == null then m.content = "" end
  m.reasoning_content = nil
  m.tool_call_id = nil
  local tcs = m.tool_calls
  if tcs ~= nil then
    if tcs == null or tcs[1] == nil then
      m.tool_calls = nil
    else
      for k = 1, #tcs do
        local tc = tcs[k]
        local fn = tc["function"] or tc
        local a = fn.arguments
        if type(a) ~= "table" then a = args_object(a) end
        tcs[k] = { ["function"] = { name = fn.name, arguments = a } }
      end
    end
  end
  if m.role == "tool" then
    local n = m.name
    if n and n ~= null and n ~= "" then m.tool_name = n end
  end
  m.name = nil
  local imgs = m.images
  if imgs ~= nil and (imgs == null or imgs[1] == nil) then m.images = nil end
  return m
end

-- The request without per-message work (the host may have converted the
-- messages with transform_message already and pass none here).
function adapter.transform_request(raw)
  local req = json.decode(raw)
  local msgs = req.messages
  if msgs == nil or msgs == null then
    msgs = json.array()
    req.messages = msgs
  end
  local tm = adapter.transform_message
  for i = 1, #msgs do
    msgs[i] = tm(msgs[i])
  end
  local tools = req.tools
  if tools ~= nil and (tools == null or tools[1] == nil) then req.tools = nil end
  req.stream = req.stream == true
  local opts = req.options
  if opts == nil or opts == null then opts = {} end
  local o, has = {}, false
  local v = req.temperature
  if v ~= nil and v ~= null then o.temperature = v; has = true end
  v = req.max_tokens
  if v ~= nil and v ~= null then o.num_predict = v; has = true end
  v = opts.num_ctx
  if type(v) == "number" and v > 0 then o.num_ctx = math.tointeger(v) or v; has = true end
  req.temperature, req.max_tokens = nil, nil
  req.options = has and o or nil
  v = opts.format
  if v ~= nil and v ~= null then req.format = v end
  v = opts.think
  if v ~= nil and v ~= null then req.think = v end
  v = opts.keep_alive
  if v ~= nil and v ~= null then req.keep_alive = v end
  return req
end

-- Every field read below may be null, missing or of another type (a server
-- bug, a proxy, a fuzzer): each is type-checked, so no shape of a JSON value
-- raises a Lua error (issue 14). Wrong-typed fields count as absent.

local function finish_reason(done_reason)
  if nonempty(done_reason) then return done_reason end
  return "stop"
end

local function count(v)
  if type(v) == "number" and v >= 0 then return v end
  return nil
end

local function usage(r)
  local p, c = count(r.prompt_eval_count), count(r.eval_count)
  if not p and not c then return nil end
  p, c = p or 0, c or 0
  return { prompt_tokens = p, completion_tokens = c, total_tokens = p + c }
end

-- Ollama sends each call whole: arguments already an object, maybe an id.
-- A call without a function name is left out.
local function calls_of(list)
  local out = json.array()
  if type(list) ~= "table" then return out end
  for _, tc in ipairs(list) do
    local fn = type(tc) == "table" and tc["function"]
    if type(fn) == "table" and nonempty(fn.name) then
      out[#out + 1] = {
        id = nonempty(tc.id) and tc.id or nil,
        name = fn.name,
        arguments = args_object(fn.arguments),
      }
    end
  end
  return out
end

local function error_text(e)
  if type(e) == "string" then return e end
  if type(e) == "table" and nonempty(e.message) then return e.message end
  return json.encode(e)
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if type(r) ~= "table" then return { error = "the response is not a JSON object" } end
  if present(r.error) then return { error = error_text(r.error) } end
  local msg = type(r.message) == "table" and r.message or {}
  return {
    content = type(msg.content) == "string" and msg.content or "",
    reasoning_content = nonempty(msg.thinking) and msg.thinking or nil,
    finish_reason = finish_reason(r.done_reason),
    token_usage = usage(r),
    tool_calls = calls_of(msg.tool_calls),
    model = nonempty(r.model) and r.model or nil,
  }
end

-- Called for every chunk, so the common case (a content piece) runs
-- without helper calls (each Lua call costs). The final line is the one
-- with `done: true`, or (its `done` field damaged) the one carrying a
-- `done_reason`, which Ollama sends only there.
function adapter.transform_stream_chunk(line)
  local r = json.decode(line)
  if type(r) ~= "table" then return nil end
  local err = r.error
  if err ~= nil and err ~= null then return { error = error_text(err) } end
  local out = {}
  local msg = r.message
  if type(msg) == "table" then
    local c = msg.content
    if type(c) == "string" and c ~= "" then out.content = c end
    local th = msg.thinking
    if type(th) == "string" and th ~= "" then out.reasoning = th end
    local tcs = msg.tool_calls
    if type(tcs) == "table" and tcs[1] ~= nil then
      -- Whole calls, no stream index: the host appends each as a new call.
      local calls = calls_of(tcs)
      if calls[1] ~= nil then out.tool_call_deltas = calls end
    end
  end
  local done, dr = r.done, r.done_reason
  if done == true or (done ~= false and type(dr) == "string" and dr ~= "") then
    out.done = true
    out.finish_reason = finish_reason(dr)
    out.usage = usage(r)
  end
  return out
end

-- Errors: {"error": "..."} (native) or {"error": {"message": ...}} (/v1 shape).
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
  elseif status == 404 and msg:find("not found", 1, true) then
    out.kind = "model_not_found"
  end
  return out
end

-- The model's context window from /api/show: a num_ctx set in the
-- Modelfile parameters wins over the architecture's <arch>.context_length.
function adapter.context_window(base_url, model, headers)
  local body, status = http_post(base_url .. "/api/show", json.encode({ model = model }), headers)
  if not body then
    log("warn", "ollama /api/show failed: " .. tostring(status))
    return nil
  end
  if status ~= 200 then
    log("warn", "ollama /api/show answered HTTP " .. tostring(status))
    return nil
  end
  local r = json.decode(body)
  if type(r) ~= "table" then return nil end
  if type(r.parameters) == "string" then
    local n = r.parameters:match("num_ctx%s+(%d+)")
    if n then return math.tointeger(tonumber(n)) end
  end
  if type(r.model_info) == "table" then
    local arch = r.model_info["general.architecture"]
    if nonempty(arch) and type(r.model_info[arch .. ".context_length"]) == "number" then
      return r.model_info[arch .. ".context_length"]
    end
    for k, v in pairs(r.model_info) do
      if type(k) == "string" and k:match("%.context_length$") and type(v) == "number" then return v end
    end
  end
  return nil
end

-- Embeddings (issue 19, seed 001's primary vector space): POST /api/embed
-- {model, input = [texts]} -> {model, embeddings = [[numbers]]}, one vector
-- per text in the order sent. keep_alive is passed on like chat's.
adapter.embed_endpoint = "/api/embed"

function adapter.transform_embed_request(raw)
  local r = json.decode(raw)
  local body = { model = r.model, input = r.input }
  if r.options and r.options ~= null and nonempty(r.options.keep_alive) then body.keep_alive = r.options.keep_alive end
  return json.encode(body)
end

-- {vectors = [[numbers]], model} or {error = text}.
function adapter.transform_embed_response(raw)
  local r = json.decode(raw)
  if type(r) ~= "table" then return { error = "not a JSON object" } end
  if present(r.error) then return { error = tostring(r.error) } end
  if type(r.embeddings) ~= "table" then return { error = "no embeddings in the answer" } end
  return { vectors = r.embeddings, model = r.model }
end

return adapter
