# Mason bees in Ruby threads: REEDS reed tokens and FLOWERS flower tokens wait in queues, each
# token carrying the vector clock of the bee that put it back. Every bee writes its own log file,
# one record a line behind an ISO-8601 time stamp in its own time zone, as GoVector would with
# a logger in front:  2026-11-30T16:20:01.123+01:00 bee-2 {"bee-1":1,"bee-2":3} enter reed:1
# ruby o9_bees_ruby.rb DIR BEES EGGS REEDS FLOWERS [squat]   then   sort -m DIR/*.log > LOG
# squat: bee-1 lays its first egg in reed:1 without taking its token.
require 'json'
dir, bees, eggs, reeds, flowers, mode = ARGV[0], *ARGV[1, 4].map(&:to_i), ARGV[5]
Dir.mkdir(dir) unless Dir.exist?(dir)
reed_q, flower_q = Queue.new, Queue.new
(1..reeds).each { |r| reed_q << [r, {}] }
flowers.times { |f| flower_q << [f, {}] }
zones = ['+01:00', '-05:00', '+05:30', 'Z']
threads = (1..bees).map do |b|
  Thread.new do
    me, vc = "bee-#{b}", {}
    zone = zones[b % zones.size]
    out = File.open(File.join(dir, "#{me}.log"), 'w')
    log = lambda do |text|
      vc[me] = vc.fetch(me, 0) + 1
      t = Time.now.getlocal(zone == 'Z' ? '+00:00' : zone)
      stamp = t.strftime('%Y-%m-%dT%H:%M:%S.%L') + (zone == 'Z' ? 'Z' : t.strftime('%:z'))
      out.write("#{stamp} #{me} #{JSON.generate(vc)} #{text}\n")
      out.flush
    end
    merge = ->(clock) { clock.each { |k, v| vc[k] = v if v > vc.fetch(k, 0) } }
    eggs.times do |e|
      log.call('request flower')
      f, clock = flower_q.pop
      merge.call(clock)
      log.call("took flower token #{f}")
      log.call('enter flower')
      sleep 0.001
      log.call('exit flower')
      log.call("put back flower token #{f}")
      flower_q << [f, vc.dup]
      if mode == 'squat' && b == 1 && e.zero?
        r = 1
        sleep 0.005
      else
        r, clock = reed_q.pop
        merge.call(clock)
        log.call("took reed token #{r}")
      end
      log.call("enter reed:#{r}")
      log.call("egg #{e + 1}")
      sleep 0.002
      log.call("exit reed:#{r}")
      next if mode == 'squat' && b == 1 && e.zero?
      log.call("put back reed token #{r}")
      reed_q << [r, vc.dup]
    end
    out.close
  end
end
threads.each(&:join)
