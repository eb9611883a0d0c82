-- Dining philosophers by resource hierarchy (Dijkstra): a hungry philosopher takes its
-- lower-numbered fork first, then the higher; forks travel as messages between neighbours.
-- Plain Lua 5.4, its own small JSON reader and writer; written from docs/test-any-program.md.
-- Arguments: --left-first (every philosopher takes its left fork first: a cycle, a deadlock),
-- --give-while-eating (a fork asked for while eating is handed over at once).
local LEFT_FIRST, GIVE_EATING = false, false
for _, a in ipairs(arg) do
  if a == "--left-first" then LEFT_FIRST = true end
  if a == "--give-while-eating" then GIVE_EATING = true end
end

-- JSON ------------------------------------------------------------------------------------
local function skip(s, i) return s:find("[^ \t\r\n]", i) or #s + 1 end
local parse_value
local function parse_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f" }
      if e == "u" then
        out[#out + 1] = utf8.char(tonumber(s:sub(j + 2, j + 5), 16)); j = j + 6
      else out[#out + 1] = map[e] or e; j = j + 2 end
    else out[#out + 1] = c; j = j + 1 end
  end
end
function parse_value(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local t = {}; i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return t, i + 1 end
    while true do
      local k; k, i = parse_string(s, skip(s, i)); i = skip(s, i) + 1
      t[k], i = parse_value(s, i); i = skip(s, i)
      if s:sub(i, i) == "}" then return t, i + 1 end
      i = i + 1
    end
  elseif c == "[" then
    local t = {}; i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return t, i + 1 end
    while true do
      t[#t + 1], i = parse_value(s, i); i = skip(s, i)
      if s:sub(i, i) == "]" then return t, i + 1 end
      i = i + 1
    end
  elseif c == '"' then return parse_string(s, i)
  elseif s:sub(i, i + 3) == "true" then return true, i + 4
  elseif s:sub(i, i + 4) == "false" then return false, i + 5
  elseif s:sub(i, i + 3) == "null" then return nil, i + 4
  else
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
    return math.tointeger(tonumber(num)) or tonumber(num), i + #num
  end
end
local function enc(v)
  local t = type(v)
  if t == "table" then
    local parts = {}
    if v[1] ~= nil then
      for _, x in ipairs(v) do parts[#parts + 1] = enc(x) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = enc(k) .. ":" .. enc(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif t == "string" then return '"' .. v:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
  elseif t == "boolean" then return tostring(v)
  else return tostring(v) end
end

-- the philosopher -------------------------------------------------------------------------
local me, n, forks, want, pending, hungry, eating
local function out(t) io.write(enc(t), "\n") end

local function owner_other(f)          -- the neighbour sharing fork f with me
  if f == me then return (me - 2) % n + 1 else return me % n + 1 end
end

local function order()
  local l, r = me, me % n + 1
  if LEFT_FIRST or l < r then return { l, r } end
  return { r, l }
end

local function step()                   -- take forks in order, asking for the first one missing
  if not hungry or eating then return end
  for _, f in ipairs(order()) do
    if not forks[f] then
      if not want[f] then
        want[f] = true
        out({ type = "send", to = owner_other(f), body = { type = "ASK", fork = f } })
      end
      return
    end
    forks[f] = "using"
  end
  eating = true
  local l, r = me, me % n + 1
  out({ type = "state", state = "EATING" })
  out({ type = "enter", resource = "fork:" .. l })
  out({ type = "enter", resource = "fork:" .. r })
  out({ type = "enter", resource = "meal" })
end

local function give(f)
  forks[f] = nil
  pending[f] = nil
  out({ type = "send", to = owner_other(f), body = { type = "FORK", fork = f } })
end

local function handle(m)
  local t = m.type
  if t == "init" then
    me, n = m.id, m.nodes
    forks, want, pending, hungry, eating = {}, {}, {}, false, false
    forks[me] = "idle"                  -- fork i starts with philosopher i (its left)
    if n == 1 then forks[me] = "idle" end
    return true
  elseif t == "request" then
    hungry = true
    out({ type = "state", state = "HUNGRY" })
    step()
  elseif t == "release" then
    eating, hungry = false, false
    local l, r = me, me % n + 1
    out({ type = "exit", resource = "meal" })
    out({ type = "exit", resource = "fork:" .. l })
    out({ type = "exit", resource = "fork:" .. r })
    out({ type = "state", state = "THINKING" })
    for f in pairs(forks) do forks[f] = "idle" end
    for f in pairs(pending) do if forks[f] then give(f) end end
  elseif t == "recv" then
    local b = m.body
    if b.type == "ASK" then
      local f = b.fork
      if forks[f] == "idle" or (GIVE_EATING and forks[f]) then give(f)
      else pending[f] = true end
    elseif b.type == "FORK" then
      forks[b.fork] = "idle"
      want[b.fork] = nil
      if not hungry and pending[b.fork] then give(b.fork) end
      step()
    end
  end
  return false
end

io.stdout:setvbuf("full")
for line in io.lines() do
  if line:match("%S") then
    local m = parse_value(line, 1)
    if handle(m) then out({ type = "done", reinit = true }) else out({ type = "done" }) end
    io.stdout:flush()
  end
end
