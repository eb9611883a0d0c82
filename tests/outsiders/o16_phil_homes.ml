(* Dining philosophers for mutexlab's node protocol (docs/test-any-program.md), OCaml 4.13,
   the standard library alone: run it as a script, `ocaml o16_phil_homes.ml`, or compile it
   with `ocamlopt -o phil o16_phil_homes.ml` -- it needs nothing but Stdlib.

   Every fork has a home: fork i lives with philosopher i, who lends it to its left neighbour
   (philosopher i-1, or N for fork 1) on an ASK, and gets it back by a BACK.  Deadlock is avoided
   by the resource hierarchy: every philosopher picks up its lower-numbered fork first (so
   philosopher N starts with fork 1, its right one).

     BROKEN_ORDER=1   everybody starts with the left fork, philosopher N too
     BROKEN_LEND=1    lends its own fork unless it is eating with it (picked up, hungry: lent)
     LAZY_FLUSH=1     forgets to flush stdout after an answer *)

type json =
  | Null
  | Bool of bool
  | Int of int
  | Str of string
  | List of json list
  | Obj of (string * json) list

exception Bad_json of string

(* --- a small JSON reader: what mutexlab sends us, nothing more -------------------------------- *)

let parse (s : string) : json =
  let pos = ref 0 in
  let len = String.length s in
  let peek () = if !pos < len then s.[!pos] else '\000' in
  let rec skip () =
    match peek () with ' ' | '\t' | '\r' | '\n' -> incr pos; skip () | _ -> ()
  in
  let expect c =
    skip ();
    if peek () <> c then raise (Bad_json (Printf.sprintf "expected %c at %d" c !pos));
    incr pos
  in
  let rec value () =
    skip ();
    match peek () with
    | '{' -> incr pos; obj []
    | '[' -> incr pos; arr []
    | '"' -> Str (str ())
    | 't' -> pos := !pos + 4; Bool true
    | 'f' -> pos := !pos + 5; Bool false
    | 'n' -> pos := !pos + 4; Null
    | _ -> num ()
  and obj acc =
    skip ();
    if peek () = '}' then (incr pos; Obj (List.rev acc))
    else begin
      let k = (skip (); str ()) in
      expect ':';
      let v = value () in
      skip ();
      if peek () = ',' then incr pos;
      obj ((k, v) :: acc)
    end
  and arr acc =
    skip ();
    if peek () = ']' then (incr pos; List (List.rev acc))
    else begin
      let v = value () in
      skip ();
      if peek () = ',' then incr pos;
      arr (v :: acc)
    end
  and str () =
    expect '"';
    let b = Buffer.create 16 in
    let rec go () =
      match peek () with
      | '"' -> incr pos
      | '\\' ->
        Buffer.add_char b s.[!pos + 1];
        pos := !pos + 2;
        go ()
      | c -> Buffer.add_char b c; incr pos; go ()
    in
    go ();
    Buffer.contents b
  and num () =
    let start = !pos in
    while (match peek () with '-' | '0' .. '9' | '.' | 'e' | 'E' | '+' -> true | _ -> false) do
      incr pos
    done;
    match int_of_string_opt (String.sub s start (!pos - start)) with
    | Some n -> Int n
    | None -> raise (Bad_json ("bad number at " ^ string_of_int start))
  in
  value ()

let field k = function Obj kv -> (try List.assoc k kv with Not_found -> Null) | _ -> Null
let to_int = function Int n -> n | _ -> 0
let to_str = function Str s -> s | _ -> ""

(* --- writing ---------------------------------------------------------------------------------- *)

let out = Buffer.create 256
let line fmt = Printf.ksprintf (fun s -> Buffer.add_string out s; Buffer.add_char out '\n') fmt
let send to_ kind fork = line {|{"type":"send","to":%d,"body":{"type":"%s","fork":%d}}|} to_ kind fork
let lazy_flush = Sys.getenv_opt "LAZY_FLUSH" = Some "1"
let broken_order = Sys.getenv_opt "BROKEN_ORDER" = Some "1"
let broken_lend = Sys.getenv_opt "BROKEN_LEND" = Some "1"

let answer ?reinit () =
  (match reinit with
   | Some r -> line {|{"type":"done","reinit":%b}|} r
   | None -> line {|{"type":"done"}|});
  print_string (Buffer.contents out);
  Buffer.clear out;
  if not lazy_flush then flush stdout

(* --- the philosopher -------------------------------------------------------------------------- *)

type phase = Thinking | Hungry | Eating

type me = {
  mutable id : int;
  mutable n : int;
  mutable phase : phase;
  mutable lent : bool;          (* my own fork is with my left neighbour *)
  mutable using_own : bool;     (* I hold my own fork *)
  mutable asked : bool;         (* my left neighbour waits for my fork *)
  mutable have_right : bool;    (* I hold my right neighbour's fork *)
  mutable asking : bool;        (* I have asked for it, no GRANT yet *)
}

let me = { id = 0; n = 0; phase = Thinking; lent = false; using_own = false; asked = false;
           have_right = false; asking = false }

let right () = me.id mod me.n + 1
let left_neighbour () = if me.id = 1 then me.n else me.id - 1

(* the forks in the order I pick them up *)
let order () =
  let own = me.id and r = right () in
  if broken_order || own < r then [ own; r ] else [ r; own ]

let holds f = if f = me.id then me.using_own else me.have_right

let lend_own () =
  me.asked <- false;
  me.lent <- true;
  send (left_neighbour ()) "GRANT" me.id

(* pick up forks in order, as far as we can now *)
let rec progress () =
  if me.phase = Hungry then
    match List.find_opt (fun f -> not (holds f)) (order ()) with
    | None ->
      me.phase <- Eating;
      line {|{"type":"enter","resource":"fork:%d"}|} me.id;
      line {|{"type":"enter","resource":"fork:%d"}|} (right ());
      line {|{"type":"enter","resource":"meal"}|};
      line {|{"type":"state","state":"EATING"}|}
    | Some f when f = me.id ->
      if not me.lent then (me.using_own <- true; progress ())
    | Some f ->
      if not me.asking then (me.asking <- true; send (right ()) "ASK" f)

let handle msg =
  match to_str (field "type" msg) with
  | "init" ->
    me.id <- to_int (field "id" msg);
    me.n <- to_int (field "nodes" msg);
    me.phase <- Thinking;
    me.lent <- false; me.using_own <- false; me.asked <- false; me.have_right <- false;
    me.asking <- false;
    answer ~reinit:true ()
  | "request" ->
    me.phase <- Hungry;
    line {|{"type":"state","state":"HUNGRY"}|};
    progress ();
    answer ()
  | "release" ->
    me.phase <- Thinking;
    line {|{"type":"exit","resource":"meal"}|};
    line {|{"type":"exit","resource":"fork:%d"}|} me.id;
    line {|{"type":"exit","resource":"fork:%d"}|} (right ());
    line {|{"type":"state","state":"THINKING"}|};
    me.using_own <- false;
    me.have_right <- false;
    send (right ()) "BACK" (right ());
    if me.asked then lend_own ();
    answer ()
  | "recv" ->
    let body = field "body" msg in
    (match to_str (field "type" body) with
     | "ASK" ->
       let busy = if broken_lend then me.phase = Eating else me.using_own in
       if busy then me.asked <- true else lend_own ()
     | "GRANT" -> me.have_right <- true; me.asking <- false; progress ()
     | "BACK" -> me.lent <- false; progress ()
     | _ -> ());
    answer ()
  | _ -> answer ()

let () =
  try
    while true do
      let l = input_line stdin in
      if String.trim l <> "" then handle (parse l)
    done
  with End_of_file -> ()
