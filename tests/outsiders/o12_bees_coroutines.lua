-- Mason bees for `mutexlab test bees --node "lua5.4 o12_bees_coroutines.lua"`, from
-- docs/test-any-program.md and docs/bees.md.
--
-- Each bee's life is a coroutine: it runs until it must wait for a message (a flower granted,
-- its reed handed on) and yields the name of what it waits for; an input whose message is that
-- one resumes it. Reeds are dealt by rank (bee i: reed (i-1)%T+1, the (i-1)//T-th bee on it),
-- a bee hands its reed to the next (NEXT) when it dies; bee 1 also keeps the flowers (REQ,
-- GRANT, BACK), and keeps serving them once dead. A small JSON reader of its own; io.write,
-- flushed after each done.
--
-- --early-next hands the reed on before leaving it (two bees on one reed).
local EARLY = arg[1] == "--early-next"

-- JSON, as much as the inputs need
local function decode(s)
  local pos = 1
  local value
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local function str()
    local out, i = {}, pos + 1
    while true do
      local c = s:sub(i, i)
      if c == '"' then pos = i + 1; return table.concat(out) end
      if c == "\\" then
        local e = s:sub(i + 1, i + 1)
        if e == "u" then out[#out + 1] = utf8.char(tonumber(s:sub(i + 2, i + 5), 16)); i = i + 6
        else out[#out + 1] = ({ n = "\n", t = "\t", r = "\r", b = "\b", f = "\f" })[e] or e; i = i + 2 end
      else out[#out + 1] = c; i = i + 1 end
    end
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}; pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws(); local k = str(); ws(); pos = pos + 1 -- the colon
        t[k] = value(); ws()
        local sep = s:sub(pos, pos); pos = pos + 1
        if sep == "}" then return t end
      end
    elseif c == "[" then
      local t = {}; pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value(); ws()
        local sep = s:sub(pos, pos); pos = pos + 1
        if sep == "]" then return t end
      end
    elseif c == '"' then return str()
    elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif s:sub(pos, pos + 3) == "null" then pos = pos + 4; return nil
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      pos = pos + #num
      return math.tointeger(tonumber(num)) or tonumber(num)
    end
  end
  return value()
end

local function out(line) io.write(line, "\n") end
local function send(to, kind, extra) out(('{"type":"send","to":%d,"body":{"type":"%s"%s}}'):format(to, kind, extra or "")) end

local me, n, reeds, eggs, per_reed, free, queue, life, waits_for

local function grant(who)
  if who == 1 then
    -- the keeper's own bee: it waits in its coroutine (or is about to ask, inside it)
    return true
  end
  send(who, "GRANT")
  return false
end

local function resume(...)
  local ok, what = coroutine.resume(life, ...)
  if not ok then io.stderr:write("bee ", me, ": ", tostring(what), "\n"); os.exit(5) end
  waits_for = coroutine.status(life) ~= "dead" and what or nil
end

local function back()
  free = free + 1
  if #queue > 0 then
    local who = table.remove(queue, 1)
    free = free - 1
    if grant(who) then return "self" end
  end
end

local function ask_flower()
  if me ~= 1 then send(1, "REQ"); coroutine.yield("GRANT"); return end
  if free > 0 then free = free - 1; return end
  queue[#queue + 1] = 1
  coroutine.yield("GRANT")
end

local function bee_life()
  local reed, slot = (me - 1) % reeds + 1, (me - 1) // reeds
  if slot >= per_reed then out('{"type":"state","state":"RETIRED"}'); return end
  if slot > 0 then coroutine.yield("NEXT") end
  out(('{"type":"enter","resource":"reed:%d"}'):format(reed))
  out('{"type":"state","state":"ON_REED"}')
  for egg = 1, eggs do
    ask_flower()
    out('{"type":"enter","resource":"flower"}')
    out('{"type":"exit","resource":"flower"}')
    out(('{"type":"event","event":"egg","reed":%d,"count":%d,"in_reed":%d}'):format(reed, egg, slot * eggs + egg))
    if me == 1 then
      if back() == "self" then error("granted to itself while visiting") end
    else
      send(1, "BACK")
    end
  end
  local next_bee = me + reeds
  local hand_on = slot + 1 < per_reed and next_bee <= n
  if EARLY and hand_on then send(next_bee, "NEXT", (',"reed":%d'):format(reed)) end
  out(('{"type":"exit","resource":"reed:%d"}'):format(reed))
  out('{"type":"state","state":"DEAD"}')
  if not EARLY and hand_on then send(next_bee, "NEXT", (',"reed":%d'):format(reed)) end
end

for line in io.lines() do
  local m = decode(line)
  if m.type == "init" then
    me, n = m.id, m.nodes
    reeds, eggs = m.options.reeds, m.options.eggs
    per_reed = m.options.cocoons // eggs
    free, queue = m.options.flowers, {}
    life = coroutine.create(bee_life)
    resume()
    out('{"type":"done","reinit":true}')
  else
    if m.type == "recv" then
      local kind = m.body.type
      if kind == "REQ" then
        free = free - 1
        if free >= 0 then send(m.from, "GRANT") else free = free + 1; queue[#queue + 1] = m.from end
      elseif kind == "BACK" then
        if back() == "self" then resume("GRANT") end
      elseif kind == waits_for then
        resume(kind)
      end
    end
    out('{"type":"done"}')
  end
  io.stdout:flush()
end
