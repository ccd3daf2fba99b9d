
#ifndef BOOST_MPL_BITXOR_HPP_INCLUDED
#define BOOST_MPL_BITXOR_HPP_INCLUDED

// Copyright Aleksey Gurtovoy 2000-2004
// Copyright Jaap Suter 2003
//
// Distributed under the Boost Software License, Version 1.0. 
// (See accompanying file LICENSE_1_0.txt or copy at 
// http://www.boost.org/LICENSE_1_0.txt)
//
// See http://www.boost.org/libs/mpl for documentation.

// $Id$
// $Date$
// $Revision$

#define AUX778076_OP_NAME   bitxor_
#define AUX778076_OP_PREFIX bitxor
#define AUX778076_OP_TOKEN  ^
#include <boost/mpl/aux_/arithmetic_op.hpp>

#endif // BOOST_MPL_BITXOR_HPP_INCLUDED
