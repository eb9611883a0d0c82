#!/usr/bin/env ruby
# The hamster killers, the whole town in one Ruby program, written from docs/test-any-program.md:
# the mayor (node 0) deals each round's contracts to the elves in turn and keeps the pins and
# poison, granting an elf both at once when both suffice (first come, first served); an elf takes
# its contracts one at a time. $stdout.sync, one puts per line. --overdraw grants without
# looking at what is left; --count-dealt stops a round once its contracts are all dealt.
require "json"
$stdout.sync = true
OVERDRAW = ARGV.include?("--overdraw")
COUNT_DEALT = ARGV.include?("--count-dealt")

def out(h) = puts(JSON.generate(h))

class Town
  def initialize(m)
    @id, @o = m["id"], m["options"]
    @clock = 0
    if @id.zero?
      @round, @free, @queue, @done = 0, { "pins" => @o["pins"], "poison" => @o["poison"] }, [], 0
      next_round
    else
      @todo, @busy = [], nil
      state("ELF_IDLE")
    end
  end

  def send(to, body) = out(type: "send", to: to, body: body.merge(sender: @id, ts: @clock += 1))
  def state(s) = out(type: "state", state: s)

  # -- the mayor ---------------------------------------------------------------------------
  def next_round
    @round += 1
    @done = 0
    out(type: "event", event: "round", round: @round)
    contracts = @o["plan"][@round - 1]
    contracts.each_with_index do |hamsters, i|
      elf = i % @o["elves"] + 1
      send(elf, { type: "CONTRACT", round: @round, contract: i + 1, hamsters: hamsters })
      @done += 1 if COUNT_DEALT
    end
    state("MAYOR_WAITING")
    finish_round if COUNT_DEALT
  end

  def finish_round
    (1..@o["elves"]).each { |e| send(e, { type: "STOP", round: @round }) }
    if @round == @o["plan"].size then state("MAYOR_DONE") else next_round end
  end

  def grant_what_fits
    while (ask = @queue.first)
      fits = ask["pins"] <= @free["pins"] && ask["poison"] <= @free["poison"]
      break unless fits || OVERDRAW
      @queue.shift
      @free["pins"] -= ask["pins"]
      @free["poison"] -= ask["poison"]
      send(ask["sender"], { type: "GRANT" })
    end
  end

  def mayor(body)
    case body["type"]
    when "ASK" then @queue << body
    when "DONE"
      @free["pins"] += body["pins"]
      @free["poison"] += body["poison"]
      unless COUNT_DEALT
        @done += 1
        finish_round if @done == @o["plan"][@round - 1].size
      end
    end
    grant_what_fits
  end

  # -- an elf ------------------------------------------------------------------------------
  def elf(body)
    case body["type"]
    when "CONTRACT" then @todo << body
    when "GRANT"
      r, c, h = @busy.values_at("round", "contract", "hamsters")
      pins, poison = @o["pins_per_elf"], h * @o["poison_per_hamster"]
      out(type: "enter", resource: "pins", units: pins)
      out(type: "enter", resource: "poison", units: poison)
      out(type: "event", event: "contract_done", round: r, contract: c, hamsters: h)
      out(type: "exit", resource: "poison", units: poison)
      out(type: "exit", resource: "pins", units: pins)
      out(type: "exit", resource: "contract:#{r}.#{c}")
      send(0, { type: "DONE", pins: pins, poison: poison })
      @busy = nil
    when "STOP"
      state("ELF_DONE") if body["round"] == @o["plan"].size && @todo.empty? && @busy.nil?
      return
    end
    take_next
  end

  def take_next
    return if @busy || @todo.empty?
    @busy = @todo.shift
    out(type: "enter", resource: "contract:#{@busy['round']}.#{@busy['contract']}")
    state("ELF_WAIT_FOR_RELEASE")
    send(0, { type: "ASK", pins: @o["pins_per_elf"], poison: @busy["hamsters"] * @o["poison_per_hamster"] })
  end

  def recv(m)
    @clock = [@clock, m["body"]["ts"].to_i].max
    @id.zero? ? mayor(m["body"]) : elf(m["body"])
  end
end

town = nil
$stdin.each_line do |line|
  next if line.strip.empty?
  m = JSON.parse(line)
  if m["type"] == "init"
    town = Town.new(m)
    out(type: "done", reinit: true)
  else
    town.recv(m) if m["type"] == "recv"
    out(type: "done")
  end
end
