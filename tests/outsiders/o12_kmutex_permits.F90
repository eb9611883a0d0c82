! K-mutual exclusion for `mutexlab test kmutex`, written in Fortran from docs/test-any-program.md.
!
! Node 1 keeps the K permits: a node asks it (ASK), it grants (GRANT) while a permit is free and
! queues the asker otherwise; a node gives its permit back (BACK) as it leaves. Node 1 itself
! takes a permit without messages.
!
! Style: fixed-length character variables read with read(*,'(a)') (the line comes padded with
! blanks), fields found with index(), list-directed numbers; every line written with
! write(*,'(a)') trim(...), and flush(6) after each done (gfortran buffers a unit on a pipe).
!
! gfortran -cpp -O2 -o kperm o12_kmutex_permits.F90; -DBROKEN_BACK counts a permit given back
! by node 1 itself twice (K + 1 inside).
program kpermits
  implicit none
  character(len=4096) :: line
  character(len=64) :: kind
  integer :: ios, me, n, k, free, from, qhead, qtail, i
  integer :: queue(1000)
  logical :: inside
  me = 0; n = 0; k = 1; free = 0; qhead = 1; qtail = 0; inside = .false.
  do
    read(*, '(a)', iostat=ios) line
    if (ios /= 0) exit
    kind = text(line, 'type')
    select case (trim(kind))
    case ('init')
      me = number(line, 'id'); n = number(line, 'nodes'); k = number(line, 'k')
      free = k; qhead = 1; qtail = 0; inside = .false.
      write(0, '(a,i0,a,i0,a,i0)') 'init me=', me, ' n=', n, ' k=', k
      write(*, '(a)') '{"type":"done","reinit":true}'
      flush(6)
      cycle
    case ('request')
      if (me == 1) then
        call want(1)
      else
        call send(1, 'ASK')
      end if
    case ('release')
      inside = .false.
      write(*, '(a)') '{"type":"exit","resource":"cs","units":1}'
      if (me == 1) then
        call give_back()
#ifdef BROKEN_BACK
        call give_back()
#endif
      else
        call send(1, 'BACK')
      end if
    case ('recv')
      from = number(line, 'from')
      kind = text(line(1:index(line, '}')), 'type')
      select case (trim(kind))
      case ('ASK')
        call want(from)
      case ('BACK')
        call give_back()
      case ('GRANT')
        call enter()
      end select
    end select
    write(*, '(a)') '{"type":"done"}'
    flush(6)
  end do

contains

  subroutine enter()
    inside = .true.
    write(*, '(a)') '{"type":"enter","resource":"cs","units":1}'
  end subroutine

  subroutine grant(who)
    integer, intent(in) :: who
    free = free - 1
    if (who == me) then
      call enter()
    else
      call send(who, 'GRANT')
    end if
  end subroutine

  subroutine want(who)
    integer, intent(in) :: who
    if (free > 0) then
      call grant(who)
    else
      qtail = qtail + 1; queue(qtail) = who
    end if
  end subroutine

  subroutine give_back()
    free = free + 1
    if (qhead <= qtail .and. free > 0) then
      i = queue(qhead); qhead = qhead + 1
      call grant(i)
    end if
  end subroutine

  subroutine send(to, what)
    integer, intent(in) :: to
    character(len=*), intent(in) :: what
    character(len=200) :: out
    write(out, '(a,i0,a,a,a)') '{"type":"send","to":', to, ',"body":{"type":"', what, '"}}'
    write(*, '(a)') trim(out)
  end subroutine

  function text(s, key) result(v)
    character(len=*), intent(in) :: s, key
    character(len=64) :: v
    integer :: at, stop
    v = ''
    at = index(s, '"' // key // '":"', back=.true.)
    if (at == 0) return
    at = at + len(key) + 4
    stop = index(s(at:), '"')
    v = s(at:at + stop - 2)
  end function

  function number(s, key) result(v)
    character(len=*), intent(in) :: s, key
    integer :: v, at, stop
    v = 0
    at = index(s, '"' // key // '":', back=.true.)
    if (at == 0) return
    at = at + len(key) + 3
    stop = verify(s(at:), '-0123456789')
    read(s(at:at + stop - 2), *) v
  end function
end program
