#!lua name=svckit_json
--[[
JSON.* commands as a Redis Functions library, for backends without the RedisJSON module.

A document is stored as its compact JSON text in a plain string key. It is parsed by the small
codec below rather than by cjson because cjson loses two things RedisJSON keeps: the order of
object keys (Lua tables have none) and the difference between [] and {} (both become an empty
table). Values: Lua strings and booleans, NULL, {t='n', v=<number>, f=<is float>},
{t='a', n=<length>, ...items}, {t='o', keys={...in order}, map={key=value}}.

Every function runs atomically inside Redis, so JSON commands are safe in pipelines and in
MULTI/EXEC. The gateway maps JSON.GET k $.a to FCALL_RO svckit_json_get 1 k $.a.
]]

-- At FUNCTION LOAD time a library may only call redis.register_function (fakeredis enforces this
-- strictly: not even `string` or `pairs` exist yet), so everything is built on the first call.
local function build()
local NULL = {}  -- the JSON null (a unique table)
local unpack = table.unpack or unpack
local sub, find, byte, char, format = string.sub, string.find, string.byte, string.char, string.format

local function fail(msg) error({err = msg}, 0) end

-- ---------------------------------------------------------------- decoding
local function skip(s, i) return find(s, '[^ \t\r\n]', i) or (#s + 1) end

local function utf8char(cp)
  if cp < 0x80 then return char(cp)
  elseif cp < 0x800 then return char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64)
  elseif cp < 0x10000 then
    return char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local ESC = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t'}

local function bad(s, i, what) fail(format('ERR invalid JSON: %s at offset %d', what, i - 1)) end

local function parse_string(s, i)
  local buf, j = {}, i + 1
  while true do
    local k = find(s, '["\\]', j)
    if not k then bad(s, i, 'unterminated string') end
    if k > j then buf[#buf + 1] = sub(s, j, k - 1) end
    if sub(s, k, k) == '"' then return table.concat(buf), k + 1 end
    local e = sub(s, k + 1, k + 1)
    if e == 'u' then
      local hex = sub(s, k + 2, k + 5)
      if not find(hex, '^%x%x%x%x$') then bad(s, k, 'bad \\u escape') end
      local cp, nxt = tonumber(hex, 16), k + 6
      if cp >= 0xD800 and cp <= 0xDBFF and sub(s, nxt, nxt + 1) == '\\u' then
        local lo = tonumber(sub(s, nxt + 2, nxt + 5), 16)
        if lo and lo >= 0xDC00 and lo <= 0xDFFF then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          nxt = nxt + 6
        end
      end
      buf[#buf + 1] = utf8char(cp)
      j = nxt
    else
      local r = ESC[e]
      if not r then bad(s, k, 'bad escape') end
      buf[#buf + 1] = r
      j = k + 2
    end
  end
end

local parse_value

local function parse_number(s, i)
  local a, b = find(s, '^-?%d+', i)
  if not a then bad(s, i, 'unexpected character') end
  local isfloat = false
  local c, d = find(s, '^%.%d+', b + 1)
  if c then b = d; isfloat = true end
  c, d = find(s, '^[eE][-+]?%d+', b + 1)
  if c then b = d; isfloat = true end
  local v = tonumber(sub(s, a, b))
  if not isfloat and math.abs(v) >= 2 ^ 53 then isfloat = true end
  return {t = 'n', v = v, f = isfloat}, b + 1
end

parse_value = function(s, i)
  i = skip(s, i)
  local c = sub(s, i, i)
  if c == '{' then
    local obj = {t = 'o', keys = {}, map = {}}
    i = skip(s, i + 1)
    if sub(s, i, i) == '}' then return obj, i + 1 end
    while true do
      if sub(s, i, i) ~= '"' then bad(s, i, 'expected a string key') end
      local key
      key, i = parse_string(s, i)
      i = skip(s, i)
      if sub(s, i, i) ~= ':' then bad(s, i, "expected ':'") end
      local v
      v, i = parse_value(s, i + 1)
      if obj.map[key] == nil then obj.keys[#obj.keys + 1] = key end
      obj.map[key] = v
      i = skip(s, i)
      c = sub(s, i, i)
      if c == '}' then return obj, i + 1 end
      if c ~= ',' then bad(s, i, "expected ',' or '}'") end
      i = skip(s, i + 1)
    end
  elseif c == '[' then
    local arr = {t = 'a', n = 0}
    i = skip(s, i + 1)
    if sub(s, i, i) == ']' then return arr, i + 1 end
    while true do
      local v
      v, i = parse_value(s, i)
      arr.n = arr.n + 1
      arr[arr.n] = v
      i = skip(s, i)
      c = sub(s, i, i)
      if c == ']' then return arr, i + 1 end
      if c ~= ',' then bad(s, i, "expected ',' or ']'") end
      i = i + 1
    end
  elseif c == '"' then return parse_string(s, i)
  elseif sub(s, i, i + 3) == 'true' then return true, i + 4
  elseif sub(s, i, i + 4) == 'false' then return false, i + 5
  elseif sub(s, i, i + 3) == 'null' then return NULL, i + 4
  end
  return parse_number(s, i)
end

local function decode(s)
  local v, i = parse_value(s, 1)
  if skip(s, i) <= #s then bad(s, i, 'trailing characters') end
  return v
end

-- ---------------------------------------------------------------- encoding
local SESC = {['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
  ['\b'] = '\\b', ['\f'] = '\\f'}

local function enc_string(v)
  return '"' .. (string.gsub(v, '[%z\1-\31"\\]', function(c)
    return SESC[c] or format('\\u%04x', byte(c))
  end)) .. '"'
end

local function fmt_number(n)
  local v = n.v
  if not n.f and math.abs(v) < 2 ^ 53 then return format('%d', v) end
  if v ~= v or v == math.huge or v == -math.huge then fail('ERR result is not a finite number') end
  local s = format('%.15g', v)
  if tonumber(s) ~= v then s = format('%.17g', v) end
  if not find(s, '[%.eEn]') then s = s .. '.0' end
  return s
end

local function is_obj(v) return type(v) == 'table' and v.t == 'o' end
local function is_arr(v) return type(v) == 'table' and v.t == 'a' end
local function is_num(v) return type(v) == 'table' and v.t == 'n' end

local function encode(v, o, depth)
  local tv = type(v)
  if tv == 'string' then return enc_string(v)
  elseif v == true then return 'true'
  elseif v == false then return 'false'
  elseif v == NULL then return 'null'
  elseif v.t == 'n' then return fmt_number(v)
  end
  depth = depth or 0
  local parts = {}
  if v.t == 'a' then
    if v.n == 0 then return '[]' end
    for i = 1, v.n do parts[i] = encode(v[i], o, depth + 1) end
    if not o then return '[' .. table.concat(parts, ',') .. ']' end
    local pad = o.nl .. string.rep(o.ind, depth + 1)
    return '[' .. pad .. table.concat(parts, ',' .. pad) .. o.nl .. string.rep(o.ind, depth) .. ']'
  end
  if #v.keys == 0 then return '{}' end
  local colon = o and (':' .. o.sp) or ':'
  for i, k in ipairs(v.keys) do parts[i] = enc_string(k) .. colon .. encode(v.map[k], o, depth + 1) end
  if not o then return '{' .. table.concat(parts, ',') .. '}' end
  local pad = o.nl .. string.rep(o.ind, depth + 1)
  return '{' .. pad .. table.concat(parts, ',' .. pad) .. o.nl .. string.rep(o.ind, depth) .. '}'
end

local function new_arr(items) local a = {t = 'a', n = #items}; for i, x in ipairs(items) do a[i] = x end; return a end

local function obj_set(o, k, v)
  if o.map[k] == nil then o.keys[#o.keys + 1] = k end
  o.map[k] = v
end

local function obj_del(o, k)
  if o.map[k] == nil then return false end
  o.map[k] = nil
  for i, key in ipairs(o.keys) do if key == k then table.remove(o.keys, i); break end end
  return true
end

local function arr_remove(a, i)
  local v = a[i]
  for j = i, a.n - 1 do a[j] = a[j + 1] end
  a[a.n] = nil
  a.n = a.n - 1
  return v
end

local function arr_insert(a, i, v)
  for j = a.n, i, -1 do a[j + 1] = a[j] end
  a[i] = v
  a.n = a.n + 1
end

local function type_name(v)
  if type(v) == 'string' then return 'string'
  elseif type(v) == 'boolean' then return 'boolean'
  elseif v == NULL then return 'null'
  elseif v.t == 'n' then return v.f and 'number' or 'integer'
  elseif v.t == 'a' then return 'array' end
  return 'object'
end

local function utf8len(s) local _, n = string.gsub(s, '[^\128-\191]', ''); return n end

-- ---------------------------------------------------------------- paths
-- '$...' is a JSONPath (replies list every match); '.', '.a.b', 'a[0]' are legacy paths (replies
-- give the first match and an error when there is none).
local function parse_path(p)
  local legacy, i, segs = true, 1, {}
  if sub(p, 1, 1) == '$' then legacy, i = false, 2
  elseif p == '.' then return {legacy = true, segs = segs, text = p}
  elseif sub(p, 1, 1) ~= '.' and sub(p, 1, 1) ~= '[' then p = '.' .. p end
  local function unsupported() fail(format("ERR unsupported or invalid JSONPath '%s'", p)) end
  while i <= #p do
    local c = sub(p, i, i)
    if c == '.' then
      local desc = false
      if sub(p, i + 1, i + 1) == '.' then desc = true; i = i + 1 end
      if sub(p, i + 1, i + 1) == '*' then
        segs[#segs + 1] = {k = desc and 'descall' or 'all'}
        i = i + 2
      else
        local a, b = find(p, '^[^%.%[]+', i + 1)
        if not a then
          if legacy and i == #p and #segs == 0 then break end
          unsupported()
        end
        segs[#segs + 1] = {k = desc and 'desc' or 'key', v = sub(p, a, b)}
        i = b + 1
      end
    elseif c == '[' then
      local close = find(p, ']', i + 1, true)
      if not close then unsupported() end
      local inner = sub(p, i + 1, close - 1)
      local q = sub(inner, 1, 1)
      if inner == '*' then segs[#segs + 1] = {k = 'all'}
      elseif (q == "'" or q == '"') and sub(inner, -1) == q and #inner >= 2 then
        segs[#segs + 1] = {k = 'key', v = sub(inner, 2, -2)}
      elseif find(inner, '^%s*-?%d+%s*$') then segs[#segs + 1] = {k = 'idx', v = tonumber(inner)}
      else unsupported() end
      i = close + 1
    else
      unsupported()
    end
  end
  return {legacy = legacy, segs = segs, text = p}
end

local function children(v, out)
  if is_obj(v) then for _, k in ipairs(v.keys) do out[#out + 1] = {parent = v, key = k, value = v.map[k]} end
  elseif is_arr(v) then for i = 1, v.n do out[#out + 1] = {parent = v, key = i, value = v[i]} end end
end

local function descend(v, seg, out)
  if is_obj(v) and seg.k == 'desc' and v.map[seg.v] ~= nil then
    out[#out + 1] = {parent = v, key = seg.v, value = v.map[seg.v]}
  end
  local kids = {}
  children(v, kids)
  for _, m in ipairs(kids) do
    if seg.k == 'descall' then out[#out + 1] = m end
    descend(m.value, seg, out)
  end
end

local function eval(doc, segs)
  local cur = {{value = doc}}
  for _, seg in ipairs(segs) do
    local nxt = {}
    for _, m in ipairs(cur) do
      local v = m.value
      if seg.k == 'key' then
        if is_obj(v) and v.map[seg.v] ~= nil then nxt[#nxt + 1] = {parent = v, key = seg.v, value = v.map[seg.v]} end
      elseif seg.k == 'idx' then
        if is_arr(v) then
          local i = seg.v
          if i < 0 then i = v.n + i end
          if i >= 0 and i < v.n then nxt[#nxt + 1] = {parent = v, key = i + 1, value = v[i + 1]} end
        end
      elseif seg.k == 'all' then children(v, nxt)
      else descend(v, seg, nxt) end
    end
    cur = nxt
  end
  return cur
end

local function replace(m, v)
  if m.parent == nil then return v end
  if is_arr(m.parent) then m.parent[m.key] = v else m.parent.map[m.key] = v end
end

-- ---------------------------------------------------------------- keys
local function load(key)
  local raw = redis.pcall('GET', key)
  if type(raw) == 'table' and raw.err then fail('WRONGTYPE Operation against a key holding the wrong kind of value') end
  if not raw then return nil end
  local ok, doc = pcall(decode, raw)
  if not ok then fail('WRONGTYPE Operation against a key holding the wrong kind of value') end
  return doc
end

local function store(key, doc) redis.call('SET', key, encode(doc), 'KEEPTTL') end

local function must_load(key)
  local doc = load(key)
  if doc == nil then fail("ERR could not perform this operation on a key that doesn't exist") end
  return doc
end

local function no_path(path) fail(format("ERR Path '%s' does not exist", path.text)) end

-- Apply fn to every match; $-paths reply with a list (false = nil for a match of the wrong type),
-- legacy paths with the first non-nil result (an error when there is none).
local function each(doc, path, fn, wrong_type)
  local matches = eval(doc, path.segs)
  local results = {}
  for i, m in ipairs(matches) do
    local r = fn(m)
    if r == nil then r = false end
    results[i] = r
  end
  if not path.legacy then return results end
  for _, r in ipairs(results) do if r ~= false then return r end end
  if #matches == 0 then no_path(path) end
  fail(wrong_type or 'ERR wrong type of path value')
end

local function argc(args, n, name)
  if #args < n then fail(format("ERR wrong number of arguments for 'json.%s' command", name)) end
end

-- ---------------------------------------------------------------- commands
local commands, readonly = {}, {}

local function set_at(key, doc, path, value, mode)
  if doc == nil then
    if #path.segs > 0 then fail('ERR new objects must be created at the root') end
    if mode == 'XX' then return false end
    store(key, value)
    return true
  end
  local matches = eval(doc, path.segs)
  if #matches > 0 then
    if mode == 'NX' then return false end
    for _, m in ipairs(matches) do
      local r = replace(m, value)
      if r ~= nil then doc = r end
    end
    store(key, doc)
    return true
  end
  if mode == 'XX' then return false end
  local last = path.segs[#path.segs]
  if last.k ~= 'key' then
    if path.legacy then no_path(path) end
    return false
  end
  local parents = {unpack(path.segs, 1, #path.segs - 1)}
  local created = false
  for _, m in ipairs(eval(doc, parents)) do
    if is_obj(m.value) then obj_set(m.value, last.v, value); created = true end
  end
  if not created then
    if path.legacy then no_path(path) end
    return false
  end
  store(key, doc)
  return true
end

commands.set = function(keys, args)
  argc(args, 2, 'set')
  local mode = args[3] and string.upper(args[3]) or nil
  if mode and mode ~= 'NX' and mode ~= 'XX' then fail('ERR syntax error') end
  local ok = set_at(keys[1], load(keys[1]), parse_path(args[1]), decode(args[2]), mode)
  if ok then return redis.status_reply('OK') end
  return false
end

commands.mset = function(keys, args)
  if #keys == 0 or #args ~= 2 * #keys then fail("ERR wrong number of arguments for 'json.mset' command") end
  local plan = {}
  for i, key in ipairs(keys) do
    plan[i] = {key = key, path = parse_path(args[2 * i - 1]), value = decode(args[2 * i])}
  end
  for _, p in ipairs(plan) do set_at(p.key, load(p.key), p.path, p.value, nil) end
  return redis.status_reply('OK')
end

local function merge(target, patch)
  if not is_obj(patch) then return patch end
  if not is_obj(target) then target = {t = 'o', keys = {}, map = {}} end
  for _, k in ipairs(patch.keys) do
    local pv = patch.map[k]
    if pv == NULL then obj_del(target, k)
    else obj_set(target, k, merge(target.map[k], pv)) end
  end
  return target
end

commands.merge = function(keys, args)
  argc(args, 2, 'merge')
  local doc, path, patch = load(keys[1]), parse_path(args[1]), decode(args[2])
  if doc == nil then
    if #path.segs > 0 then fail('ERR new objects must be created at the root') end
    store(keys[1], merge(NULL, patch))
    return redis.status_reply('OK')
  end
  local matches = eval(doc, path.segs)
  if #matches == 0 then return set_at(keys[1], doc, path, merge(NULL, patch), nil) and redis.status_reply('OK') or false end
  for _, m in ipairs(matches) do
    local r = replace(m, merge(m.value, patch))
    if r ~= nil then doc = r end
  end
  store(keys[1], doc)
  return redis.status_reply('OK')
end

local function format_options(args)
  local o, paths, i = nil, {}, 1
  while i <= #args do
    local word = string.upper(args[i])
    if (word == 'INDENT' or word == 'NEWLINE' or word == 'SPACE') and args[i + 1] ~= nil then
      o = o or {ind = '', nl = '', sp = ''}
      if word == 'INDENT' then o.ind = args[i + 1] elseif word == 'NEWLINE' then o.nl = args[i + 1]
      else o.sp = args[i + 1] end
      i = i + 2
    else
      paths[#paths + 1] = args[i]
      i = i + 1
    end
  end
  return o, paths
end

local function values_of(matches) local out = {}; for i, m in ipairs(matches) do out[i] = m.value end; return new_arr(out) end

commands.get = function(keys, args)
  local doc = load(keys[1])
  if doc == nil then return false end
  local o, texts = format_options(args)
  if #texts == 0 then texts = {'.'} end
  local paths, any_dollar = {}, false
  for i, t in ipairs(texts) do
    paths[i] = parse_path(t)
    if not paths[i].legacy then any_dollar = true end
  end
  if #paths == 1 then
    local matches = eval(doc, paths[1].segs)
    if not paths[1].legacy then return encode(values_of(matches), o) end
    if #matches == 0 then no_path(paths[1]) end
    return encode(matches[1].value, o)
  end
  local out = {t = 'o', keys = {}, map = {}}
  for i, p in ipairs(paths) do
    local matches = eval(doc, p.segs)
    if any_dollar then obj_set(out, texts[i], values_of(matches))
    else
      if #matches == 0 then no_path(p) end
      obj_set(out, texts[i], matches[1].value)
    end
  end
  return encode(out, o)
end
readonly.get = true

commands.mget = function(keys, args)
  argc(args, 1, 'mget')
  local path = parse_path(args[#args])
  local out = {}
  for i, key in ipairs(keys) do
    local doc = load(key)
    out[i] = false
    if doc ~= nil then
      local matches = eval(doc, path.segs)
      if not path.legacy then out[i] = encode(values_of(matches))
      elseif #matches > 0 then out[i] = encode(matches[1].value) end
    end
  end
  return out
end
readonly.mget = true

local function delete(keys, args)
  local doc = load(keys[1])
  if doc == nil then return 0 end
  local path = parse_path(args[1] or '$')
  if #path.segs == 0 then redis.call('DEL', keys[1]); return 1 end
  local matches = eval(doc, path.segs)
  -- delete array items from the highest index down so earlier indexes stay valid
  table.sort(matches, function(a, b)
    if type(a.key) == 'number' and type(b.key) == 'number' then return a.key > b.key end
    return type(a.key) == 'string' and type(b.key) == 'number'
  end)
  local n = 0
  for _, m in ipairs(matches) do
    if is_arr(m.parent) then arr_remove(m.parent, m.key); n = n + 1
    elseif obj_del(m.parent, m.key) then n = n + 1 end
  end
  if n > 0 then store(keys[1], doc) end
  return n
end
commands.del = delete
commands.forget = delete

commands.type = function(keys, args)
  local doc = load(keys[1])
  if doc == nil then return false end
  local path = parse_path(args[1] or '.')
  local matches = eval(doc, path.segs)
  if not path.legacy then
    local out = {}
    for i, m in ipairs(matches) do out[i] = type_name(m.value) end
    return out
  end
  if #matches == 0 then return false end
  return type_name(matches[1].value)
end
readonly.type = true

local function numop(name, combine)
  return function(keys, args)
    argc(args, 2, name)
    local doc, path, by = must_load(keys[1]), parse_path(args[1]), decode(args[2])
    if not is_num(by) then fail('ERR the increment is not a number') end
    local matches = eval(doc, path.segs)
    local results = {}
    for i, m in ipairs(matches) do
      if is_num(m.value) then
        local r = {t = 'n', v = combine(m.value.v, by.v), f = m.value.f or by.f}
        if not r.f and (r.v ~= math.floor(r.v) or math.abs(r.v) >= 2 ^ 53) then r.f = true end
        local top = replace(m, r)
        if top ~= nil then doc = top end
        results[i] = r
      else
        results[i] = NULL
      end
    end
    if path.legacy then
      if #matches == 0 then no_path(path) end
      local first = results[1]
      if first == NULL then fail('ERR the value at the path is not a number') end
      store(keys[1], doc)
      return encode(first)
    end
    store(keys[1], doc)
    return encode(new_arr(results))
  end
end
commands.numincrby = numop('numincrby', function(a, b) return a + b end)
commands.nummultby = numop('nummultby', function(a, b) return a * b end)

local function measure(name, pred, measure_fn, default_path)
  return function(keys, args)
    local doc = load(keys[1])
    if doc == nil then
      if args[1] == nil or sub(args[1], 1, 1) ~= '$' then return false end
      return false
    end
    local path = parse_path(args[1] or default_path)
    return each(doc, path, function(m) if pred(m.value) then return measure_fn(m.value) end end,
      'ERR wrong type of path value: not ' .. name)
  end
end
commands.arrlen = measure('an array', is_arr, function(v) return v.n end, '.')
commands.objlen = measure('an object', is_obj, function(v) return #v.keys end, '.')
commands.strlen = measure('a string', function(v) return type(v) == 'string' end, utf8len, '.')
commands.objkeys = measure('an object', is_obj, function(v)
  local out = {}
  for i, k in ipairs(v.keys) do out[i] = k end
  return out
end, '.')
readonly.arrlen, readonly.objlen, readonly.strlen, readonly.objkeys = true, true, true, true

-- A write over every match; returns the reply of `each` and stores the document.
local function mutate(keys, path_text, fn, wrong)
  local doc = must_load(keys[1])
  local path = parse_path(path_text)
  local reply = each(doc, path, fn, wrong)
  store(keys[1], doc)
  return reply
end

commands.arrappend = function(keys, args)
  argc(args, 2, 'arrappend')
  local values = {}
  for i = 2, #args do values[#values + 1] = decode(args[i]) end
  return mutate(keys, args[1], function(m)
    if not is_arr(m.value) then return nil end
    for _, v in ipairs(values) do m.value.n = m.value.n + 1; m.value[m.value.n] = v end
    return m.value.n
  end, 'ERR wrong type of path value: not an array')
end

commands.arrinsert = function(keys, args)
  argc(args, 3, 'arrinsert')
  local index = tonumber(args[2])
  if not index then fail('ERR value is not an integer or out of range') end
  local values = {}
  for i = 3, #args do values[#values + 1] = decode(args[i]) end
  return mutate(keys, args[1], function(m)
    local a = m.value
    if not is_arr(a) then return nil end
    local at = index < 0 and a.n + index or index
    if at < 0 or at > a.n then fail('ERR index out of bounds') end
    for j, v in ipairs(values) do arr_insert(a, at + j, v) end
    return a.n
  end, 'ERR wrong type of path value: not an array')
end

commands.arrpop = function(keys, args)
  local index = args[2] and tonumber(args[2]) or -1
  if not index then fail('ERR value is not an integer or out of range') end
  local doc = load(keys[1])
  if doc == nil then fail("ERR could not perform this operation on a key that doesn't exist") end
  local path = parse_path(args[1] or '.')
  local popped_any = false
  local matches = eval(doc, path.segs)
  local results = {}
  for i, m in ipairs(matches) do
    local a = m.value
    results[i] = false
    if is_arr(a) and a.n > 0 then
      local at = index < 0 and a.n + index or index
      if at < 0 then at = 0 elseif at >= a.n then at = a.n - 1 end
      results[i] = encode(arr_remove(a, at + 1))
      popped_any = true
    elseif is_arr(a) then results[i] = NULL end
  end
  if popped_any then store(keys[1], doc) end
  if not path.legacy then
    for i, r in ipairs(results) do if r == NULL then results[i] = false end end
    return results
  end
  if #matches == 0 then no_path(path) end
  local first = results[1]
  if first == NULL then return false end
  if first == false then fail('ERR wrong type of path value: not an array') end
  return first
end

commands.arrindex = function(keys, args)
  argc(args, 2, 'arrindex')
  local doc = must_load(keys[1])
  local needle = encode(decode(args[2]))
  local start, stop = tonumber(args[3] or '0'), tonumber(args[4] or '0')
  return each(doc, parse_path(args[1]), function(m)
    local a = m.value
    if not is_arr(a) then return nil end
    local s = start < 0 and math.max(a.n + start, 0) or start
    local e = (stop == 0 or stop > a.n) and a.n or (stop < 0 and a.n + stop or stop)
    for i = s + 1, e do if encode(a[i]) == needle then return i - 1 end end
    return -1
  end, 'ERR wrong type of path value: not an array')
end
readonly.arrindex = true

commands.arrtrim = function(keys, args)
  argc(args, 3, 'arrtrim')
  local start, stop = tonumber(args[2]), tonumber(args[3])
  if not start or not stop then fail('ERR value is not an integer or out of range') end
  return mutate(keys, args[1], function(m)
    local a = m.value
    if not is_arr(a) then return nil end
    local s = start < 0 and math.max(a.n + start, 0) or start
    local e = stop < 0 and a.n + stop or math.min(stop, a.n - 1)
    local kept = {}
    for i = s + 1, e + 1 do kept[#kept + 1] = a[i] end
    for i = 1, a.n do a[i] = nil end
    a.n = #kept
    for i, v in ipairs(kept) do a[i] = v end
    return a.n
  end, 'ERR wrong type of path value: not an array')
end

commands.clear = function(keys, args)
  local doc = load(keys[1])
  if doc == nil then return 0 end
  local path = parse_path(args[1] or '$')
  local n = 0
  for _, m in ipairs(eval(doc, path.segs)) do
    local v = m.value
    if is_arr(v) then
      if v.n > 0 then for i = 1, v.n do v[i] = nil end; v.n = 0 end
      n = n + 1
    elseif is_obj(v) then v.keys, v.map = {}, {}; n = n + 1
    elseif is_num(v) then
      local top = replace(m, {t = 'n', v = 0, f = false})
      if top ~= nil then doc = top end
      n = n + 1
    end
  end
  store(keys[1], doc)
  return n
end

commands.toggle = function(keys, args)
  argc(args, 1, 'toggle')
  local doc = must_load(keys[1])
  local path = parse_path(args[1])
  local results = {}
  local matches = eval(doc, path.segs)
  for i, m in ipairs(matches) do
    if type(m.value) == 'boolean' then
      local top = replace(m, not m.value)
      if top ~= nil then doc = top end
      results[i] = m.value and 0 or 1
    else results[i] = false end
  end
  store(keys[1], doc)
  if not path.legacy then return results end
  if #matches == 0 then no_path(path) end
  if results[1] == false then fail('ERR wrong type of path value: not a boolean') end
  return results[1] == 1 and 'true' or 'false'
end

commands.strappend = function(keys, args)
  argc(args, 1, 'strappend')
  local path_text, value = '.', args[1]
  if #args >= 2 then path_text, value = args[1], args[2] end
  local suffix = decode(value)
  if type(suffix) ~= 'string' then fail('ERR the value to append must be a JSON string') end
  local doc = must_load(keys[1])
  local reply = each(doc, parse_path(path_text), function(m)
    if type(m.value) ~= 'string' then return nil end
    local s = m.value .. suffix
    local top = replace(m, s)
    if top ~= nil then doc = top end
    return utf8len(s)
  end, 'ERR wrong type of path value: not a string')
  store(keys[1], doc)
  return reply
end

local function protect(fn)
  return function(keys, args)
    local ok, res = pcall(fn, keys, args)
    if ok then return res end
    if type(res) == 'table' and res.err then return redis.error_reply(res.err) end
    return redis.error_reply('ERR ' .. tostring(res))
  end
end

return {commands = commands, protect = protect}
end

-- ---------------------------------------------------------------- registration
local NAMES = {'set', 'mset', 'merge', 'get', 'mget', 'del', 'forget', 'type', 'numincrby', 'nummultby',
  'arrlen', 'objlen', 'strlen', 'objkeys', 'arrappend', 'arrinsert', 'arrpop', 'arrindex', 'arrtrim',
  'clear', 'toggle', 'strappend'}
local READS = {get = true, mget = true, type = true, arrlen = true, objlen = true, strlen = true,
  objkeys = true, arrindex = true}
local impl = nil

local function entry(name)
  local fn = nil
  return function(keys, args)
    if fn == nil then
      if impl == nil then impl = build() end
      fn = impl.protect(impl.commands[name])
    end
    return fn(keys, args)
  end
end

for i = 1, #NAMES do
  local name = NAMES[i]
  local flags = {}
  if READS[name] then flags = {'no-writes'} end
  redis.register_function{function_name = 'svckit_json_' .. name, callback = entry(name), flags = flags}
end
