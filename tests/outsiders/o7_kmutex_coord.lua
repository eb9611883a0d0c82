-- A K-mutex for `mutexlab test kmutex`, in plain Lua 5.4 (no modules): node 1 is the
-- coordinator of K permits and a worker too.  Its own JSON reader and writer, answers
-- gathered in a table and written with one io.write, flushed once per input.
-- Flags (arg): --offbyone admits K+1, --lostgrant forgets the queue when node 1 itself
-- leaves, --noflush never flushes, --fifo-bug serves the queue last-in first-out (fine:
-- still safe), --crash-on-third exits 2 at its third input after init.
local flags = {}
for _, a in ipairs(arg) do flags[a] = true end

-- JSON ------------------------------------------------------------------------------------
local decode
local function skip(s, i) return (s:find("[^ \t\r\n]", i)) or #s + 1 end
local function dstring(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      if e == "u" then
        local cp = tonumber(s:sub(j + 2, j + 5), 16)
        j = j + 6
        if cp >= 0xD800 and cp < 0xDC00 and s:sub(j, j + 1) == "\\u" then
          local lo = tonumber(s:sub(j + 2, j + 5), 16)
          cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
          j = j + 6
        end
        out[#out + 1] = utf8.char(cp)
      else
        local map = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f" }
        out[#out + 1] = map[e] or e
        j = j + 2
      end
    else
      out[#out + 1] = c
      j = j + 1
    end
  end
end
function decode(s, i)
  i = skip(s, i or 1)
  local c = s:sub(i, i)
  if c == "{" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return t, i + 1 end
    while true do
      local k
      k, i = dstring(s, skip(s, i))
      i = skip(s, i) + 1 -- the colon
      t[k], i = decode(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      i = i + 1
      if d == "}" then return t, i end
    end
  elseif c == "[" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return t, i + 1 end
    while true do
      t[#t + 1], i = decode(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      i = i + 1
      if d == "]" then return t, i end
    end
  elseif c == '"' then
    return dstring(s, i)
  elseif s:sub(i, i + 3) == "true" then return true, i + 4
  elseif s:sub(i, i + 4) == "false" then return false, i + 5
  elseif s:sub(i, i + 3) == "null" then return nil, i + 4
  end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  return math.tointeger(tonumber(num)) or tonumber(num), i + #num
end

local function encode(v)
  local t = type(v)
  if t == "table" then
    local parts = {}
    if #v > 0 then
      for _, x in ipairs(v) do parts[#parts + 1] = encode(x) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = encode(k) .. ":" .. encode(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(ch)
      return string.format("\\u%04x", ch:byte())
    end) .. '"'
  elseif t == "boolean" then
    return tostring(v)
  else
    return string.format("%d", v)
  end
end

-- the node ----------------------------------------------------------------------------------
local id, k, inputs
local free, queue, out

local function send(to, body) out[#out + 1] = { type = "send", to = to, body = body } end
local function enter() out[#out + 1] = { type = "enter", resource = "cs" } end

local function grant(who)
  if who == 1 then enter() else send(who, { type = "GRANT", permits = free }) end
end

local function acquire(who)
  local limit = flags["--offbyone"] and -1 or 0
  if free > limit then
    free = free - 1
    grant(who)
  else
    queue[#queue + 1] = who
  end
end

local function give_back()
  free = free + 1
  if #queue > 0 then
    local who
    if flags["--fifo-bug"] then who = table.remove(queue) else who = table.remove(queue, 1) end
    free = free - 1
    grant(who)
  end
end

local handlers = {}
function handlers.init(m)
  id, k, inputs = m.id, m.options.k, 0
  free, queue = k, {}
  out[#out + 1] = { type = "done", reinit = true }
end
function handlers.request()
  if id == 1 then acquire(1) else send(1, { type = "ACQ", from = id }) end
end
function handlers.release()
  out[#out + 1] = { type = "exit", resource = "cs" }
  if id ~= 1 then
    send(1, { type = "REL" })
  elseif flags["--lostgrant"] then
    free = free + 1
  else
    give_back()
  end
end
function handlers.recv(m)
  local b = m.body
  if b.type == "ACQ" then acquire(m.from)
  elseif b.type == "REL" then give_back()
  elseif b.type == "GRANT" then enter()
  end
end

for line in io.lines() do
  out = {}
  local m = decode(line)
  inputs = (inputs or 0) + 1
  if flags["--crash-on-third"] and inputs == 4 then
    io.stderr:write("lua: third input, giving up\n")
    os.exit(2)
  end
  handlers[m.type](m)
  if m.type ~= "init" then out[#out + 1] = { type = "done" } end
  local buf = {}
  for i, o in ipairs(out) do buf[i] = encode(o) end
  io.write(table.concat(buf, "\n"), "\n")
  if not flags["--noflush"] then io.stdout:flush() end
end
