! blas_client.f90: a Fortran program linked against -lblas, run through libtessera_blas with LD_PRELOAD: DGEMM and ZGEMM vs loops.
! Bound per element: |C - C_loops| <= 2 k eps (|alpha| |A||B| + |beta| |C0|), twice the standard
! GEMM rounding bound (both results carry at most k eps each; 4 m eps for the complex ZGEMM, whose
! products add two real terms). Exit status 1 on any excess.
program blas_client
  implicit none
  integer, parameter :: m = 300, n = 280, k = 260
  double precision :: a(m, k), b(k, n), c0(m, n), c(m, n), cref(m, n), bound(m, n)
  complex(kind=8) :: za(m, k), zbt(n, k), zbt2(n, m), zc0(k, n), zc(k, n), zref(k, n)
  double precision :: zbound(k, n)
  integer :: zbad
  double precision :: alpha, beta, worst
  complex(kind=8) :: zalpha, zbeta
  integer :: i, j, bad
  external :: dgemm, zgemm

  call random_seed(put=[(42 + i, i = 1, 64)])
  call random_number(a); call random_number(b); call random_number(c0)
  a = a - 0.5d0; b = b - 0.5d0; c0 = c0 - 0.5d0
  alpha = 0.75d0; beta = -1.25d0
  c = c0
  call dgemm('N', 'N', m, n, k, alpha, a, m, b, k, beta, c, m)
  cref = alpha * matmul(a, b) + beta * c0
  bound = 2d0 * k * epsilon(1d0) * (abs(alpha) * matmul(abs(a), abs(b)) + abs(beta) * abs(c0))
  bad = count(abs(c - cref) > bound)
  worst = maxval(abs(c - cref) / bound)
  print '(a, es10.3, a, i0)', 'DGEMM: max error / bound = ', worst, ', beyond: ', bad

  ! ZGEMM('C', 'T', k, n, m): op(A) = za^H (k x m), op(B) = zbt^T (m x n), C is k x n
  za = cmplx(a, 0.5d0 * a(:, k:1:-1), kind=8)
  zbt = cmplx(transpose(b(1:k, 1:n)), 0.25d0, kind=8)  ! n x k, extended below to n x m
  zbt2(:, 1:k) = zbt; zbt2(:, k+1:m) = (0.1d0, -0.3d0)
  zc = cmplx(c0(1:k, 1:n), -c0(1:k, 1:n), kind=8)
  zc0 = zc
  zalpha = (0.7d0, -0.9d0); zbeta = (1.3d0, -1.1d0)
  call zgemm('C', 'T', k, n, m, zalpha, za, m, zbt2, n, zbeta, zc, k)
  zref = zalpha * matmul(conjg(transpose(za)), transpose(zbt2)) + zbeta * zc0
  zbound = 4d0 * m * epsilon(1d0) * (abs(zalpha) * matmul(abs(transpose(za)), abs(transpose(zbt2))) &
           + abs(zbeta) * abs(zc0))
  zbad = count(abs(zc - zref) > zbound)
  print '(a, es10.3, a, i0)', 'ZGEMM: max error / bound = ', maxval(abs(zc - zref) / zbound), ', beyond: ', zbad
  if (bad + zbad > 0) error stop 1
end program blas_client
